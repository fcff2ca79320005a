// Spider 1.0 (CC BY-SA 4.0, Yale LILY lab) read from ../shared/data/spider/ beside the repository, never
// copied into it: all 166 schemas loaded into one PostgreSQL database, and the tables each dev question needs.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { dataDir } from './sharedData';

/** ../shared/data/spider beside the checkout (a git worktree one level deeper: ../../shared). */
export const SPIDER_DIR = dataDir('spider');

interface SpiderSchema {
  db_id: string;
  table_names_original: string[];
  column_names_original: [number, string][];
  column_types: string[];
  primary_keys: (number | number[])[];
  foreign_keys: [number, number][];
}

interface SpiderQuestion {
  db_id: string;
  question: string;
  sql: unknown;
}

export interface SpiderCase {
  question: string;
  /** "schema.table" of every table the gold SQL reads (subqueries and set operations included). */
  gold: string[];
}

export interface SpiderData {
  schemas: SpiderSchema[];
  cases: SpiderCase[];
}

export function spiderAvailable(): boolean {
  return existsSync(join(SPIDER_DIR, 'tables.json')) && existsSync(join(SPIDER_DIR, 'dev.json'));
}

/**
 * One PostgreSQL schema per Spider database, named neutrally (`spider_001`…) so that the database's name
 * ("concert_singer") gives the ranking no hint: only table and column names and foreign keys do.
 */
export function schemaNameOf(index: number): string {
  return `spider_${String(index + 1).padStart(3, '0')}`;
}

export function readSpider(): SpiderData {
  const schemas = JSON.parse(readFileSync(join(SPIDER_DIR, 'tables.json'), 'utf8')) as SpiderSchema[];
  const questions = JSON.parse(readFileSync(join(SPIDER_DIR, 'dev.json'), 'utf8')) as SpiderQuestion[];
  const byDb = new Map(schemas.map((s, i) => [s.db_id, { schema: s, name: schemaNameOf(i) }]));
  const cases = questions.map((q): SpiderCase => {
    const db = byDb.get(q.db_id);
    if (!db) throw new Error(`dev.json names an unknown database ${q.db_id}`);
    const indexes = new Set<number>();
    collectTables(q.sql, indexes);
    const gold = [...indexes].map((i) => `${db.name}.${db.schema.table_names_original[i] ?? '?'}`);
    return { question: q.question, gold };
  });
  return { schemas, cases };
}

/** Every ["table_unit", i] anywhere in the parsed SQL (FROM of the query, its subqueries, UNION/INTERSECT/EXCEPT). */
function collectTables(node: unknown, into: Set<number>): void {
  if (Array.isArray(node)) {
    if (node.length === 2 && node[0] === 'table_unit' && typeof node[1] === 'number') {
      into.add(node[1]);
      return;
    }
    for (const child of node) collectTables(child, into);
  } else if (node !== null && typeof node === 'object') {
    for (const child of Object.values(node)) collectTables(child, into);
  }
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
const TYPES: Record<string, string> = {
  text: 'text',
  number: 'numeric',
  time: 'timestamp',
  boolean: 'boolean',
  others: 'text',
};

/** Creates the schemas, tables, primary keys and (where PostgreSQL accepts them) the declared foreign keys. */
export async function loadSpider(
  client: pg.Client,
  schemas: readonly SpiderSchema[],
): Promise<{ tables: number; fks: number; fksDeclared: number }> {
  let tables = 0;
  const ddl: string[] = [];
  const columnsOf = schemas.map((s) => {
    const seen = new Map<string, number>();
    // Unique, non-empty column names per table (a few Spider columns differ only by case or are repeated).
    return s.column_names_original.map(([t, name]) => {
      if (t < 0) return { table: t, name };
      const key = `${t}:${name.toLowerCase()}`;
      const n = seen.get(key) ?? 0;
      seen.set(key, n + 1);
      return { table: t, name: n === 0 ? name : `${name}_${n + 1}` };
    });
  });
  schemas.forEach((s, i) => {
    const schema = schemaNameOf(i);
    ddl.push(`CREATE SCHEMA ${q(schema)};`);
    const cols = columnsOf[i] ?? [];
    s.table_names_original.forEach((tableName, t) => {
      const defs = cols.flatMap((c, ci) =>
        c.table === t ? [`${q(c.name)} ${TYPES[s.column_types[ci] ?? 'text'] ?? 'text'}`] : [],
      );
      const pk = s.primary_keys.flatMap((k) => (Array.isArray(k) ? k : [k])).filter((ci) => cols[ci]?.table === t);
      if (pk.length > 0) defs.push(`PRIMARY KEY (${pk.map((ci) => q(cols[ci]?.name ?? '')).join(', ')})`);
      ddl.push(`CREATE TABLE ${q(schema)}.${q(tableName)} (${defs.join(', ')});`);
      tables++;
    });
  });
  await client.query('BEGIN');
  await client.query(ddl.join('\n'));
  let fks = 0;
  let fksDeclared = 0;
  for (const [i, s] of schemas.entries()) {
    const schema = schemaNameOf(i);
    const cols = columnsOf[i] ?? [];
    for (const [from, to] of s.foreign_keys) {
      fksDeclared++;
      const a = cols[from];
      const b = cols[to];
      const ta = s.table_names_original[a?.table ?? -1];
      const tb = s.table_names_original[b?.table ?? -1];
      if (!a || !b || ta === undefined || tb === undefined) continue;
      const target = `${q(schema)}.${q(tb)}`;
      // A referenced column must be unique: Spider often references a non-key column; make it unique when the
      // (empty) table allows, and skip FKs PostgreSQL refuses (mismatched types).
      // A referenced column must be unique: Spider often references a non-key column; make it unique (the
      // tables are empty). SQLite's loose types let a text column reference a number: give the referencing
      // column the referenced column's type. FKs PostgreSQL still refuses are skipped and counted.
      try {
        await client.query('SAVEPOINT fk');
        const ref = target.replaceAll("'", "''");
        const column = b.name.replaceAll("'", "''");
        await client.query(`DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '${ref}'::regclass AND contype IN ('p','u') AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = '${ref}'::regclass AND attname = '${column}')]::int2[])
          THEN ALTER TABLE ${target} ADD UNIQUE (${q(b.name)}); END IF; END $$`);
        const type = await client.query<{ type: string }>(
          `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = '${ref}'::regclass AND attname = '${column}'`,
        );
        const wanted = type.rows[0]?.type ?? 'text';
        await client.query(
          `ALTER TABLE ${q(schema)}.${q(ta)} ALTER COLUMN ${q(a.name)} TYPE ${wanted} USING ${q(a.name)}::text::${wanted}`,
        );
        await client.query(
          `ALTER TABLE ${q(schema)}.${q(ta)} ADD FOREIGN KEY (${q(a.name)}) REFERENCES ${target} (${q(b.name)})`,
        );
        await client.query('RELEASE SAVEPOINT fk');
        fks++;
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT fk');
      }
    }
  }
  await client.query('COMMIT');
  return { tables, fks, fksDeclared };
}
