// Introspection reads the catalog cheaply per row (comments joined, each deparsing function once per distinct
// input, plain index definitions written by the client): the snapshot must be exactly what the server's own
// per-row functions say. The oracle here asks them row by row (format_type, pg_get_expr, col_description,
// obj_description, pg_get_indexdef, pg_get_triggerdef) on a schema rich in what could go wrong: types with
// modifiers, arrays, domains, enums, composite types, defaults that differ only in where they were written,
// generated columns naming columns of their own table, identity, dropped columns, partitions, views,
// quoted and keyword names, every kind of index.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { plainIndexDefinition, serverNaming, type KeyColumn } from '../../../../src/core/db/indexDefinition';
import { introspectSchema } from '../../../../src/core/db/introspect';
import {
  COLUMNS_SQL,
  indexesSql,
  parseColumnList,
  QUOTING_SQL,
  RELATIONS_SQL,
  textRows,
  type ChunkParams,
  type ColumnListRow,
  type IndexRow,
  type RelationRow,
} from '../../../../src/core/db/introspectQueries';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const RICH = readFileSync(join(__dirname, '..', '..', '..', 'fixtures', 'richCatalog.sql'), 'utf8');

/** Every fact the cheap reads produce, as the server's per-row functions give it, by "schema.table". */
async function oracle(url: string): Promise<Map<string, unknown>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const relations = await client.query<{ oid: number; key: string; comment: string | null }>(
      `SELECT c.oid::int AS oid, n.nspname || '.' || c.relname AS key, obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
         AND n.nspname NOT LIKE 'pg\\_%'`,
    );
    const facts = new Map<string, unknown>();
    for (const r of relations.rows) {
      const columns = await client.query(
        `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
                pg_get_expr(d.adbin, d.adrelid) AS "default", col_description(a.attrelid, a.attnum) AS comment
         FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [r.oid],
      );
      const indexes = await client.query(
        `SELECT ic.relname AS name, i.indisunique AS unique, i.indisprimary AS primary,
                pg_get_indexdef(i.indexrelid) AS definition
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = $1 ORDER BY ic.relname`,
        [r.oid],
      );
      const triggers = await client.query(
        `SELECT tgname AS name, tgenabled <> 'D' AS enabled, pg_get_triggerdef(oid) AS definition
         FROM pg_trigger WHERE tgrelid = $1 AND NOT tgisinternal ORDER BY tgname`,
        [r.oid],
      );
      facts.set(r.key, { comment: r.comment, columns: columns.rows, indexes: indexes.rows, triggers: triggers.rows });
    }
    return facts;
  } finally {
    await client.end();
  }
}

function sameFacts(snapshot: SchemaSnapshot): Map<string, unknown> {
  return new Map(
    snapshot.tables.map((t) => [
      `${t.schema}.${t.name}`,
      {
        comment: t.comment,
        columns: t.columns.map((c) => ({
          name: c.name,
          type: c.type,
          nullable: c.nullable,
          default: c.default,
          comment: c.comment,
        })),
        indexes: t.indexes,
        triggers: t.triggers,
      },
    ]),
  );
}

describe.runIf(postgresAvailable)('introspection reads the catalog cheaply and says what the server says', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, RICH);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('gives every comment, type, default, index and trigger exactly as the per-row functions do', async () => {
    const snapshot = await db.withSession((s) => introspectSchema(s));
    const expected = await oracle(scratch.url);
    expect(snapshot.tables.length).toBe(expected.size);
    expect(Object.fromEntries(sameFacts(snapshot))).toEqual(Object.fromEntries(expected));
    // What the rest of the snapshot holds, spot-checked where the reads changed shape.
    const kinds = snapshot.tables.find((t) => t.schema === 'public' && t.name === 'kinds');
    expect(kinds?.columns.find((c) => c.name === 'mood')?.allowedValues).toEqual(['sad', 'ok', 'happy']);
    expect(kinds?.columns.find((c) => c.name === 'status')?.allowedValues).toEqual(['new', 'paid']);
    const user = snapshot.tables.find((t) => t.name === 'User');
    expect(user?.foreignKeys).toEqual([
      {
        name: 'User_user_fkey',
        columns: ['user'],
        references: { schema: 'public', table: 'kinds', columns: ['id'] },
        onDelete: 'CASCADE',
        onUpdate: 'NO ACTION',
      },
    ]);
    expect(user?.uniqueConstraints).toEqual([['from']]);
    expect(snapshot.tables.find((t) => t.name === 'events_2024')?.partitionOf).toEqual({
      schema: 'public',
      table: 'events',
    });
    // Two tables whose generated column is the same tree (column 1 + 1) name their own column.
    expect(snapshot.tables.find((t) => t.name === 'd2')?.columns.find((c) => c.name === 'c')?.default).toBe('(z + 1)');
  });

  it('writes plain index definitions itself, and leaves every other kind to the server', async () => {
    const naming = serverNaming((await db.queryText(QUOTING_SQL)).rows);
    const relations = new Map((await textRows<RelationRow>(db, RELATIONS_SQL, [null])).map((r) => [r[0], r]));
    const oids = [...relations.keys()].map(Number).sort((a, b) => a - b);
    const chunk: ChunkParams = [oids.map(String), oids[0] ?? 0, oids.at(-1) ?? 0];
    const columns = new Map<string, Map<number, KeyColumn>>();
    for (const [facts, names, oids] of await textRows<ColumnListRow>(db, COLUMNS_SQL, chunk)) {
      const shape = new Map(parseColumnList(facts, names).map((c) => [c.num, c]));
      for (const oid of oids.slice(1, -1).split(',')) columns.set(oid, shape);
    }
    const written = new Map<string, string | undefined>();
    for (const [
      oid,
      name,
      unique,
      ,
      indexOid,
      am,
      amOid,
      keys,
      classes,
      collations,
      serverSide,
    ] of await textRows<IndexRow>(db, indexesSql(true), chunk)) {
      if (serverSide !== null) continue; // not plain: deparsed by the server in the same query
      const [, schema, table] = relations.get(oid) ?? [];
      const index = {
        name,
        unique: unique === 't',
        schema: schema ?? '',
        table: table ?? '',
        am,
        amOid,
        keys,
        classes,
        collations,
      };
      const definition = plainIndexDefinition(naming, index, (n) => columns.get(oid)?.get(n));
      const server = (await db.queryText('SELECT pg_get_indexdef($1::oid)', [indexOid])).rows[0]?.[0];
      if (definition !== undefined) expect(definition).toBe(server);
      written.set(name, definition);
    }
    // Written here: keys, quoted and keyword names, several columns, hash; the column's own collation.
    for (const name of ['kinds_pkey', 'sel_idx', 'select_pkey', 'kinds_multi', 'kinds_hash', 'kinds_same_coll']) {
      expect(written.get(name), name).toBeDefined();
    }
    // Left to the server: another operator class (explicit, or by coercion), another collation, a domain, a default
    // class that takes options (its options are read by the server, not per index here).
    for (const name of [
      'kinds_pattern',
      'kinds_varchar',
      'kinds_coll',
      'kinds_domain',
      'Index With Space',
      'kinds_gist',
    ]) {
      expect(written.has(name), name).toBe(true);
      expect(written.get(name), name).toBeUndefined();
    }
  });
});
