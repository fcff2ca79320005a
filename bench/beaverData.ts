// BEAVER (MIT, Chen et al. 2024), its OpenStack part, read from ../shared/data/beaver-nw/ beside the repository,
// never copied into it: the five databases (366 tables) rebuilt empty in ONE PostgreSQL database, a schema each,
// named neutrally (beaver_1…beaver_5) so that no database name hints at the answer, MySQL types mapped to
// PostgreSQL ones, primary and foreign keys kept, enum columns as text with a CHECK (their labels are schema).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { dataDir } from './sharedData';

/** ../shared/data/beaver-nw beside the checkout (a git worktree one level deeper: ../../shared). */
export const BEAVER_DIR = dataDir('beaver-nw');

interface BeaverTable {
  db_id: string;
  table_name_original: string;
  column_names_original: string[];
  column_types: string[];
  primary_key: string[];
  foreign_key: { column_name: string; referenced_table_name: string; referenced_column_name: string }[];
}

interface BeaverQuestion {
  question: string;
  db_id: string;
  gold_tables: string[];
}

export interface BeaverCase {
  question: string;
  db: string;
  /** "schema.table" of every gold table, lower case. */
  gold: string[];
}

export interface BeaverData {
  tables: BeaverTable[];
  schemaOf: Map<string, string>;
  cases: BeaverCase[];
}

export function beaverAvailable(): boolean {
  return existsSync(join(BEAVER_DIR, 'tables.json')) && existsSync(join(BEAVER_DIR, 'questions.json'));
}

export function readBeaver(): BeaverData {
  const tables = Object.values(
    JSON.parse(readFileSync(join(BEAVER_DIR, 'tables.json'), 'utf8')) as Record<string, BeaverTable>,
  );
  const questions = JSON.parse(readFileSync(join(BEAVER_DIR, 'questions.json'), 'utf8')) as BeaverQuestion[];
  const dbs = [...new Set(tables.map((t) => t.db_id))].sort();
  const schemaOf = new Map(dbs.map((db, i) => [db, `beaver_${i + 1}`]));
  const cases = questions.map((q): BeaverCase => {
    const schema = schemaOf.get(q.db_id);
    if (!schema) throw new Error(`questions.json names an unknown database ${q.db_id}`);
    const gold = [...new Set(q.gold_tables.map((g) => `${schema}.${(g.split('#sep#')[1] ?? g).toLowerCase()}`))];
    return { question: q.question, db: q.db_id, gold };
  });
  return { tables, schemaOf, cases };
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
const lit = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** A MySQL column type as PostgreSQL spells it, and the enum labels when it is one. */
export function pgType(mysql: string): { type: string; labels?: string[] } {
  const t = mysql.trim().toLowerCase();
  const enumMatch = /^enum\((.*?)\)/.exec(mysql.trim());
  if (enumMatch) {
    const labels = [...(enumMatch[1] ?? '').matchAll(/'((?:[^']|'')*)'/g)].map((m) =>
      (m[1] ?? '').replaceAll("''", "'"),
    );
    return { type: 'text', labels };
  }
  const varchar = /^(?:var)?char\((\d+)\)/.exec(t);
  if (varchar) return { type: `varchar(${varchar[1]})` };
  const decimal = /^decimal\((\d+),\s*(\d+)\)/.exec(t);
  if (decimal) return { type: `numeric(${decimal[1]},${decimal[2]})` };
  if (t.startsWith('tinyint(1)')) return { type: 'boolean' };
  if (t.startsWith('tinyint') || t.startsWith('smallint')) return { type: 'smallint' };
  if (t.startsWith('bigint')) return { type: 'bigint' };
  if (t.startsWith('int') || t.startsWith('mediumint')) return { type: 'integer' };
  if (t.startsWith('datetime') || t.startsWith('timestamp')) return { type: 'timestamp' };
  if (t.startsWith('date')) return { type: 'date' };
  if (t.startsWith('float')) return { type: 'real' };
  if (t.startsWith('double')) return { type: 'double precision' };
  if (/^(?:tiny|medium|long)?(?:text|blob)/.test(t)) return { type: t.includes('blob') ? 'bytea' : 'text' };
  return { type: 'text' };
}

/** Creates the schemas, tables, keys and (where PostgreSQL accepts them) the declared foreign keys. */
export async function loadBeaver(client: pg.Client, data: BeaverData): Promise<{ fks: number; fksDeclared: number }> {
  const ddl: string[] = [...new Set(data.schemaOf.values())].map((s) => `CREATE SCHEMA ${q(s)};`);
  const nameOf = (id: string): { schema: string; table: string } => {
    const [db = '', table = ''] = id.split('#sep#');
    return { schema: data.schemaOf.get(db) ?? '', table };
  };
  for (const t of data.tables) {
    const schema = data.schemaOf.get(t.db_id) ?? '';
    const defs = t.column_names_original.map((c, i) => {
      const { type, labels } = pgType(t.column_types[i] ?? 'text');
      const notNull = /not null/i.test(t.column_types[i] ?? '') ? ' NOT NULL' : '';
      const check = labels ? ` CHECK (${q(c)} IN (${labels.map(lit).join(', ')}))` : '';
      return `${q(c)} ${type}${notNull}${check}`;
    });
    if (t.primary_key.length > 0) defs.push(`PRIMARY KEY (${t.primary_key.map(q).join(', ')})`);
    ddl.push(`CREATE TABLE ${q(schema)}.${q(t.table_name_original)} (${defs.join(', ')});`);
  }
  await client.query('BEGIN');
  await client.query(ddl.join('\n'));
  let fks = 0;
  let fksDeclared = 0;
  for (const t of data.tables) {
    const schema = data.schemaOf.get(t.db_id) ?? '';
    for (const fk of t.foreign_key) {
      fksDeclared++;
      const ref = nameOf(fk.referenced_table_name);
      const target = `${q(ref.schema)}.${q(ref.table)}`;
      try {
        await client.query('SAVEPOINT fk');
        // The referenced column must be unique (the tables are empty: make it so when it is not a key).
        await client.query(`DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ${lit(target)}::regclass AND contype IN ('p','u')
            AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = ${lit(target)}::regclass AND attname = ${lit(fk.referenced_column_name)})]::int2[])
          THEN ALTER TABLE ${target} ADD UNIQUE (${q(fk.referenced_column_name)}); END IF; END $$`);
        await client.query(
          `ALTER TABLE ${q(schema)}.${q(t.table_name_original)} ADD FOREIGN KEY (${q(fk.column_name)}) REFERENCES ${target} (${q(fk.referenced_column_name)})`,
        );
        await client.query('RELEASE SAVEPOINT fk');
        fks++;
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT fk');
      }
    }
  }
  await client.query('COMMIT');
  return { fks, fksDeclared };
}
