// The 50,000-table database of the scale bench (50 schemas × 1,000 tables, 8 columns, FK chains): a
// multi-tenant estate, every schema `tenant_<n>` holding the same tables. Built once (CREATE in batches, one
// transaction per schema), kept between runs: a marker table written last says the build finished.
import pg from 'pg';
import { ADMIN_DATABASE_URL } from '../test/support/scratchDatabase';

export const SCALE_DATABASE = process.env.PGAGENT_SCALE_DB ?? 'i34_scale50k';
export const SCALE_SCHEMAS = 50;
export const SCALE_TABLES_PER_SCHEMA = 1000;
const MARKER = 'public.scale_built';

export function scaleDatabaseUrl(): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${SCALE_DATABASE}`;
  return url.toString();
}

/** The table names of each schema: realistic words, so that questions can name them. */
export function scaleTableName(i: number): string {
  const words = ['orders', 'invoices', 'customers', 'payments', 'shipments', 'products', 'events', 'accounts'];
  return `${words[i % words.length]}_${String(i).padStart(4, '0')}`;
}

async function built(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const r = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${MARKER}`);
    return r.rows[0]?.n === '1';
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Ensures the database exists and is complete; returns its URL and whether it was built now. */
export async function ensureScaleDatabase(log: (line: string) => void): Promise<{ url: string; builtNow: boolean }> {
  const url = scaleDatabaseUrl();
  if (await built(url)) return { url, builtNow: false };
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [SCALE_DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${SCALE_DATABASE}`);
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const start = Date.now();
  try {
    for (let s = 1; s <= SCALE_SCHEMAS; s++) {
      const schema = `tenant_${s}`;
      const has = await client.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = 'r'`,
        [schema],
      );
      if (has.rows[0]?.n === String(SCALE_TABLES_PER_SCHEMA)) continue;
      await client.query('BEGIN');
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
      for (let t = 0; t < SCALE_TABLES_PER_SCHEMA; t += 100) {
        const ddl: string[] = [];
        for (let i = t; i < t + 100; i++) {
          const name = `${schema}.${scaleTableName(i)}`;
          const ref = i > 0 ? ` REFERENCES ${schema}.${scaleTableName(i - 1)}(id)` : '';
          ddl.push(
            `CREATE TABLE ${name} (id int PRIMARY KEY, parent_id int${ref}, name text NOT NULL, amount numeric(10,2), ` +
              `status text DEFAULT 'new', created_at timestamptz DEFAULT now(), note text, active boolean);`,
          );
          if (i % 10 === 0) ddl.push(`COMMENT ON TABLE ${name} IS 'tenant ${s} ${scaleTableName(i)}';`);
        }
        await client.query(ddl.join('\n'));
      }
      await client.query('COMMIT');
      log(`  built schema ${schema} (${s}/${SCALE_SCHEMAS}) at ${((Date.now() - start) / 1000).toFixed(0)} s`);
    }
    await client.query(`CREATE TABLE IF NOT EXISTS ${MARKER} (built_at timestamptz DEFAULT now())`);
    await client.query(`INSERT INTO ${MARKER} SELECT WHERE NOT EXISTS (SELECT 1 FROM ${MARKER})`);
  } finally {
    await client.end();
  }
  return { url, builtNow: true };
}
