// The code catalog's one query is planned with JIT off: on a large catalog its estimates pass jit_above_cost and
// compiling it cost most of its time (9 s of 12 s at 50,000 tables). Asserted on the setting the query runs
// under (jit_above_cost = 0 here, so every query would be compiled), and that a caller's session gets its own
// setting back.
import { describe, expect, it } from 'vitest';
import type { DbSession } from '../../../../src/core/db/db';
import { CATALOG_SQL } from '../../../../src/core/sql/reach/codeCatalogSql';
import { loadCodeCatalog } from '../../../../src/core/sql/reach/codeCatalog';
import { postgresAvailable } from '../../../support/services';
import { useSchemaDatabase } from '../../../support/shopDatabase';

describe.runIf(postgresAvailable)('the code catalog is read without JIT compilation', () => {
  const database = useSchemaDatabase('CREATE TABLE t (id int PRIMARY KEY, a int DEFAULT 1)');

  it('runs its query with jit off and gives the session its setting back', async () => {
    const seen: string[] = [];
    const after = await database.db.withSession(async (session) => {
      await session.query(`SET jit = on`);
      await session.query(`SET jit_above_cost = 0`);
      // The session the catalog is read on: what jit is when its query runs, asked on the same connection.
      const watched: DbSession = {
        query: async (sql, params) => {
          if (sql === CATALOG_SQL) {
            const jit = await session.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`);
            seen.push(jit.rows[0]?.jit ?? '?');
          }
          return session.query(sql, params);
        },
        queryText: (sql, params) => session.queryText(sql, params),
      };
      const catalog = await loadCodeCatalog(watched);
      expect([...catalog.relations.values()].map((r) => r.name)).toEqual(['t']);
      return (await session.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`)).rows[0]?.jit;
    });
    expect(seen).toEqual(['off']);
    expect(after).toBe('on');
  });

  it('reads it on a pool too (one pinned session)', async () => {
    const catalog = await loadCodeCatalog(database.db);
    expect(catalog.relations.size).toBe(1);
  });
});
