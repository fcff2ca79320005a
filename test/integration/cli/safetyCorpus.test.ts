// SPEC §7's safety bar: every adversarial statement of the corpus goes through `pg-agent sql --no-input`
// against a fresh scratch database, and the database must be unchanged afterwards (data, schema,
// roles, comments, grants, a standalone sequence, large objects, advisory locks); the exit code must be
// the one its decision calls for; and plain reads must return exactly what psql returns.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlCorpus } from '../../fixtures/sqlCorpus';
import { runPgAgent } from '../../support/cliHarness';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { SHOP_FINGERPRINT, SHOP_SCHEMA } from '../../support/shopSchema';

/**
 * Everything a statement could change. Roles and advisory locks are cluster-wide: only the roles the corpus
 * names (and the built-in ones) and this database's locks count, so other test files running at the same
 * time (the reach corpus creates roles and takes advisory locks on purpose) cannot change it. Sequences owned by serial columns are left out on purpose:
 * previewing an INSERT uses their values and a rollback does not give them back (a reported gap, not
 * a change of data); `order_seq`, which nothing uses as a default, must never move.
 */
const DATABASE_FINGERPRINT = `
SELECT md5(concat_ws('|',
  (${SHOP_FINGERPRINT}),
  (SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' || c.relpersistence::text, ',' ORDER BY 1)
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'),
  (SELECT string_agg(a.attrelid::regclass::text || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY 1)
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY 1) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace),
  (SELECT string_agg(t.tgname || ':' || t.tgenabled::text, ',' ORDER BY 1) FROM pg_trigger t WHERE NOT t.tgisinternal),
  (SELECT string_agg(conname || ':' || pg_get_constraintdef(oid), ',' ORDER BY 1) FROM pg_constraint WHERE connamespace = 'public'::regnamespace),
  (SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY 1) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace),
  (SELECT coalesce(string_agg(objoid || ':' || objsubid || ':' || description, ',' ORDER BY 1), '') FROM pg_description WHERE objoid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)),
  (SELECT string_agg(rolname || ':' || rolsuper || ':' || rolcanlogin, ',' ORDER BY 1) FROM pg_roles WHERE rolname IN ('analyst', 'bob', current_user) OR oid < 16384),
  (SELECT string_agg(nspname, ',' ORDER BY 1) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_temp%' AND nspname NOT LIKE 'pg\\_toast\\_temp%'),
  (SELECT string_agg(extname, ',' ORDER BY 1) FROM pg_extension),
  (SELECT coalesce(string_agg(c.relname || ':' || c.relacl::text, ',' ORDER BY 1), '') FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relacl IS NOT NULL),
  (SELECT coalesce(string_agg(setconfig::text, ',' ORDER BY 1), '') FROM pg_db_role_setting),
  (SELECT count(*) FROM pg_largeobject_metadata),
  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())),
  (SELECT last_value || ':' || is_called FROM order_seq)
)) AS fp`;

const EXIT_FOR = { run: 0, approve: 3, refuse: 4 } as const;

describe.runIf(postgresAvailable)('the adversarial corpus through pg-agent sql --no-input', () => {
  let scratch: ScratchDatabase;
  let sentinel: pg.Client;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-corpus-'));

  const fingerprint = async () => (await sentinel.query<{ fp: string }>(DATABASE_FINGERPRINT)).rows[0]?.fp;

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_corpus');
    await execSql(scratch.url, SHOP_SCHEMA);
    // A connection that must survive the whole corpus: nothing may terminate other backends.
    sentinel = new pg.Client({ connectionString: scratch.url });
    await sentinel.connect();
  });

  afterAll(async () => {
    await sentinel?.end().catch(() => undefined);
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it(`has at least 150 cases (${sqlCorpus.length})`, () => {
    expect(sqlCorpus.length).toBeGreaterThanOrEqual(150);
  });

  it.each(sqlCorpus.map((c) => [c.note, c] as const))('%s', async (_note, c) => {
    const before = await fingerprint();
    const run = await runPgAgent(
      [
        'sql',
        '--no-input',
        '--json',
        '--timeout-ms',
        '5000',
        '--db',
        scratch.url,
        '--workspace',
        workspace,
        '--',
        c.sql,
      ],
      {
        cwd: workspace,
      },
    );
    const out = JSON.parse(run.stdout || '{}') as { status?: string; error?: { code: string } };
    if (c.decision === 'run') {
      // A read may fail at run time (exit 1, e.g. the READ ONLY transaction stopping a writing function).
      expect([0, 1], `${run.stderr}`).toContain(run.code);
    } else {
      expect(run.code, `${c.sql}\n${run.stderr}`).toBe(EXIT_FOR[c.decision]);
    }
    expect(await fingerprint(), `database changed by: ${c.sql}`).toBe(before);
    expect((await sentinel.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);

    if (c.decision === 'run' && run.code === 0) {
      expect(out.status).toBe('executed');
      compareWithPsql(scratch.url, c.sql, JSON.parse(run.stdout) as CliRows);
    }
  });
});

interface CliRows {
  fields: { name: string; type: string }[];
  rows: unknown[][];
  truncated: boolean;
}

const SEP = '\u001f';

/**
 * Runs the same read with psql and compares every value's text. Skipped: results psql itself does not
 * repeat (now(), pg_locks, TABLESAMPLE: run twice to tell), and json, arrays or multi-line values, whose
 * psql text form this line-based comparison cannot split.
 */
function compareWithPsql(url: string, sql: string, cli: CliRows): void {
  if (cli.truncated || cli.fields.length === 0) return;
  // Random by definition: two runs need not agree, even when psql happens to repeat itself.
  if (/\btablesample\b|\brandom\s*\(/i.test(sql)) return;
  if (
    cli.rows.some((row) =>
      row.some((v) => (v !== null && typeof v === 'object') || (typeof v === 'string' && v.includes('\n'))),
    )
  )
    return;
  const psql = () =>
    // The same transaction as pg-agent's read: READ ONLY with its timeouts, under its application name.
    execFileSync(
      'psql',
      [
        '-X',
        '-q',
        '-A',
        '-t',
        '-F',
        SEP,
        '-P',
        'null=<NULL>',
        '-d',
        url,
        '-c',
        'BEGIN READ ONLY',
        '-c',
        'SET LOCAL statement_timeout = 5000',
        '-c',
        'SET LOCAL lock_timeout = 5000',
        '-c',
        sql,
        '-c',
        'ROLLBACK',
      ],
      { encoding: 'utf8', env: { ...process.env, PGAPPNAME: 'postgres-agent' } },
    );
  const output = psql();
  if (psql() !== output) return;
  const lines = output.split('\n').filter((line, i, all) => !(line === '' && i === all.length - 1));
  expect(lines.length, `row count differs from psql for ${sql}`).toBe(cli.rows.length);
  const text = (value: unknown) =>
    value === null
      ? '<NULL>'
      : typeof value === 'boolean'
        ? value
          ? 't'
          : 'f'
        : typeof value === 'string'
          ? value
          : JSON.stringify(value);
  // Without ORDER BY the order of rows is not defined (a cursor may even be planned differently): compare as sets.
  const ours = cli.rows.map((row) => row.map(text).join(SEP)).sort();
  expect(ours, sql).toEqual([...lines].sort());
}
