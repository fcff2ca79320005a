// The DBA tools of a job's agent (issue 26): db_health, top_queries and advise_indexes in both phases, read-only,
// their reports given to the model as untrusted data; advice builds nothing (an index is a todo through run_sql).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { adviseIndexesText, dbHealth, topQueriesText } from '../../../../src/core/jobs/phases/dbaTools';
import { TOOL_ARGS, toolsFor } from '../../../../src/core/jobs/phases/jobTools';
import type { ReadToolContext } from '../../../../src/core/jobs/phases/readTools';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import type { ScratchDatabase } from '../../../support/scratchDatabase';
import { execSql, queryValue } from '../../../support/scratchDatabase';
import { createDbaScratch, dbaClusterAvailable } from '../../../support/dbaCluster';
import { loadDbaWorkload } from '../../../support/dbaWorkload';

describe('the job agent has the DBA tools in both phases', () => {
  it('lists them and checks their arguments', () => {
    for (const phase of ['strategic', 'tactical'] as const)
      expect(toolsFor(phase).map((t) => t.name)).toEqual(
        expect.arrayContaining(['db_health', 'top_queries', 'advise_indexes']),
      );
    expect(TOOL_ARGS.top_queries.safeParse({ order: 'fastest' }).success).toBe(false);
    expect(TOOL_ARGS.advise_indexes.safeParse({ sql: 'SELECT 1', approve: true }).success).toBe(false);
  });
});

describe.runIf(dbaClusterAvailable)('DBA tools of a job on the DBA cluster', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let context: ReadToolContext;

  beforeAll(async () => {
    scratch = await createDbaScratch();
    await loadDbaWorkload(scratch.url);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    context = { db, settings: DEFAULT_SAFETY, loadSnapshot: () => Promise.reject(new Error('not needed')) };
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('db_health: findings with their fix SQL, as untrusted data', async () => {
    const text = await dbHealth(context, ['missing_fk_indexes']);
    expect(text).toMatch(/untrusted/);
    expect(text).toContain('CREATE INDEX CONCURRENTLY ON public.orders (customer_id)');
  });

  it('top_queries: says how to set pg_stat_statements up when it is missing', async () => {
    expect(await topQueriesText(context, undefined, undefined)).toContain('CREATE EXTENSION pg_stat_statements');
  });

  it('advise_indexes: measured with hypopg, nothing built; bad arguments are an error', async () => {
    await execSql(scratch.url, 'CREATE EXTENSION hypopg');
    const text = await adviseIndexesText(context, 'SELECT id FROM orders WHERE customer_id = 3', undefined);
    expect(text).toMatch(/"measured":true/);
    expect(text).toContain('CREATE INDEX CONCURRENTLY ON public.orders (customer_id');
    expect(
      await queryValue(scratch.url, "SELECT count(*)::int FROM pg_indexes WHERE indexdef LIKE '%(customer_id%'"),
    ).toBe(0);
    await expect(adviseIndexesText(context, undefined, undefined)).rejects.toThrow(/either sql or top/);
  });
});
