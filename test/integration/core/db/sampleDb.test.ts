// The embedded sample database as a person meets it: generated on first open, identical everywhere,
// kept between sessions, behaving like a real shop database, and repaired when a generation was cut short.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import { AgentError } from '../../../../src/core/platform/errors';
import type { Logger } from '../../../../src/core/platform/logger';
import { silentLogger } from '../../../../src/core/platform/logger';
import { SAMPLE_DB_LABEL, buildSampleImage, openSampleDb } from '../../../../src/core/db/sample/openSampleDb';
import { SAMPLE_ROW_COUNTS } from '../../../../src/core/db/sample/sampleData';
import { recordingLogger } from '../../../support/recordingLogger';

const SLOW = { timeout: 120_000 };
const TABLES = Object.keys(SAMPLE_ROW_COUNTS).sort();

const tempRoots: string[] = [];
const openDbs: Db[] = [];

afterEach(async () => {
  for (const db of openDbs.splice(0)) await db.close();
  for (const root of tempRoots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

/** `<fresh temp dir>/sample-db`, laid out like `<workspace>/.pgagent/sample-db`. */
function freshDataDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-sample-'));
  tempRoots.push(root);
  return path.join(root, 'sample-db');
}

async function open(dataDir: string, logger: Logger = silentLogger, onProgress?: (m: string) => void): Promise<Db> {
  const db = await openSampleDb({ dataDir, logger, onProgress });
  openDbs.push(db);
  return db;
}

async function close(db: Db): Promise<void> {
  openDbs.splice(openDbs.indexOf(db), 1);
  await db.close();
}

async function scalar<T>(db: Db, sql: string): Promise<T> {
  const result = await db.query<{ v: T }>(sql);
  const row = result.rows[0];
  if (!row) throw new Error(`no row from ${sql}`);
  return row.v;
}

async function rowCounts(db: Db): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES)
    counts[table] = await scalar<number>(db, `SELECT count(*)::int AS v FROM public.${table}`);
  return counts;
}

/** One md5 per table over every row in id order: equal fingerprints mean equal content. */
async function fingerprints(db: Db): Promise<Record<string, string>> {
  const prints: Record<string, string> = {};
  for (const table of TABLES) {
    prints[table] = await scalar<string>(
      db,
      `SELECT md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t.id), '')) AS v FROM public.${table} t`,
    );
  }
  return prints;
}

async function sqlStateOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (error) {
    return (error as { sqlState?: string }).sqlState;
  }
  return undefined;
}

describe('the embedded sample database', () => {
  it('is generated on first open with the whole shop schema and data', SLOW, async () => {
    const dataDir = freshDataDir();
    // A generation abandoned by a process that died (that pid cannot exist) must be cleaned up.
    const abandoned = `${dataDir}.building-999999999-1`;
    fs.mkdirSync(abandoned);
    fs.writeFileSync(path.join(abandoned, 'PG_VERSION'), '17\n');
    const progress: string[] = [];
    const db = await open(dataDir, silentLogger, (m) => progress.push(m));

    expect(db.kind).toBe('pglite');
    expect(db.label).toBe(SAMPLE_DB_LABEL);
    expect(progress.length).toBeGreaterThan(3);
    expect(fs.readdirSync(path.dirname(dataDir))).toEqual(['sample-db']);

    const tables = await db.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
    );
    expect(tables.rows.map((r) => r.name)).toEqual(TABLES);
    expect(await rowCounts(db)).toEqual(SAMPLE_ROW_COUNTS);

    // ANALYZE ran: the planner's row estimates are the real counts.
    const estimates = await db.query<{ name: string; n: number }>(
      "SELECT relname AS name, reltuples::int AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace",
    );
    for (const { name, n } of estimates.rows)
      expect(n, name).toBe(SAMPLE_ROW_COUNTS[name as keyof typeof SAMPLE_ROW_COUNTS]);

    const view = await db.query<{ customers: number; orders: number }>(
      'SELECT count(*)::int AS customers, sum(order_count)::int AS orders FROM public.customer_order_totals',
    );
    expect(view.rows[0]).toEqual({ customers: SAMPLE_ROW_COUNTS.customers, orders: SAMPLE_ROW_COUNTS.orders });

    const foreignKeys = await db.query<{ child: string; col: string; parent: string; ref: string; action: string }>(
      `SELECT c.conrelid::regclass::text AS child, a.attname AS col, c.confrelid::regclass::text AS parent,
              fa.attname AS ref, c.confdeltype::text AS action
         FROM pg_constraint c
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
         JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = c.confkey[1]
        WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`,
    );
    const actions = foreignKeys.rows.map((fk) => `${fk.child}.${fk.col}:${fk.action}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'order_items.order_id:c',
        'payments.order_id:c',
        'shipments.order_id:c',
        'addresses.customer_id:c',
        'reviews.product_id:c',
        'orders.customer_id:r',
        'reviews.customer_id:n',
      ]),
    );
    // The seed skips the per-row key checks, so check every key here: no row points at nothing.
    for (const fk of foreignKeys.rows) {
      const orphans = await scalar<number>(
        db,
        `SELECT count(*)::int AS v FROM public.${fk.child} c
          WHERE c.${fk.col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.${fk.parent} p WHERE p.${fk.ref} = c.${fk.col})`,
      );
      expect(orphans, `${fk.child}.${fk.col}`).toBe(0);
    }

    const uncommented = await db.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class
        WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'v') AND obj_description(oid, 'pg_class') IS NULL`,
    );
    expect(uncommented.rows).toEqual([]);

    // Orders span about three years, so age questions have non-trivial answers.
    const span = await scalar<number>(
      db,
      'SELECT (max(created_at)::date - min(created_at)::date) AS v FROM public.orders',
    );
    expect(span).toBeGreaterThan(1000);
    const statuses = await db.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM public.orders GROUP BY status ORDER BY n DESC',
    );
    expect(statuses.rows[0]?.status).toBe('delivered');
    expect(statuses.rows.map((r) => r.status)).toEqual(expect.arrayContaining(['pending', 'cancelled']));
  });

  it('is identical in every fresh directory', SLOW, async () => {
    const first = await open(freshDataDir());
    const a = await fingerprints(first);
    await close(first);
    const second = await open(freshDataDir());
    const b = await fingerprints(second);

    expect(b).toEqual(a);
    expect(a.orders).not.toBe(a.audit_log);
    expect(a.orders).toMatch(/^[0-9a-f]{32}$/);
  });

  it(
    'restores the image the build ships, with the very content a generation makes; a damaged image is generated over',
    SLOW,
    async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-sample-image-'));
      tempRoots.push(root);
      const imageFile = path.join(root, 'sample-db.tar.gz');
      fs.writeFileSync(imageFile, await buildSampleImage());
      const logger = recordingLogger();
      const restored = await openSampleDb({ dataDir: freshDataDir(), logger, imageFile });
      openDbs.push(restored);
      expect(logger.lines.map((l) => l.message)).toContain('sample database: restored from the shipped image');
      const generated = await open(freshDataDir());
      expect(await fingerprints(restored)).toEqual(await fingerprints(generated));
      expect(await rowCounts(restored)).toEqual(SAMPLE_ROW_COUNTS);

      fs.writeFileSync(imageFile, Buffer.from('not a tarball'));
      const fallback = recordingLogger();
      const regenerated = await openSampleDb({ dataDir: freshDataDir(), logger: fallback, imageFile });
      openDbs.push(regenerated);
      expect(fallback.lines.map((l) => l.message)).toEqual(
        expect.arrayContaining([
          'sample database: the shipped image could not be restored; generating instead',
          'sample database: generated',
        ]),
      );
      expect(await rowCounts(regenerated)).toEqual(SAMPLE_ROW_COUNTS);
    },
  );

  it('is kept between sessions, with the changes made to it', SLOW, async () => {
    const dataDir = freshDataDir();
    const first = await open(dataDir);
    const inserted = await first.query<{ id: number }>(
      `INSERT INTO public.customers (email, first_name, last_name, created_at)
       VALUES ('kept@example.com', 'Kept', 'Row', timestamptz '2026-01-01 00:00:00+00') RETURNING id::int AS id`,
    );
    // The sequence was moved past the generated ids, so the new row gets the next one.
    expect(inserted.rows[0]?.id).toBe(SAMPLE_ROW_COUNTS.customers + 1);
    const ordersBefore = (await fingerprints(first)).orders;
    await close(first);

    const logger = recordingLogger();
    const progress: string[] = [];
    const second = await open(dataDir, logger, (m) => progress.push(m));
    expect(progress).toEqual([]);
    expect(logger.lines.some((l) => l.fields?.created === false)).toBe(true);
    expect(
      await scalar<number>(second, "SELECT count(*)::int AS v FROM public.customers WHERE email = 'kept@example.com'"),
    ).toBe(1);
    expect((await fingerprints(second)).orders).toBe(ordersBefore);
  });

  it('behaves like a real database: audit trigger, cascades and constraints', SLOW, async () => {
    const db = await open(freshDataDir());
    expect(await scalar<number>(db, 'SELECT count(*)::int AS v FROM public.audit_log')).toBe(0);
    const target = await scalar<number>(
      db,
      `SELECT min(o.id)::int AS v FROM public.orders o
        WHERE EXISTS (SELECT 1 FROM public.shipments s WHERE s.order_id = o.id)
          AND EXISTS (SELECT 1 FROM public.payments p WHERE p.order_id = o.id)`,
    );
    const updated = target + 1;
    const items = await scalar<number>(
      db,
      `SELECT count(*)::int AS v FROM public.order_items WHERE order_id = ${target}`,
    );
    expect(items).toBeGreaterThan(0);

    await db.withSession(async (session) => {
      await session.query('BEGIN');
      await session.query(`UPDATE public.orders SET status = 'cancelled' WHERE id = ${updated}`);
      await session.query(`DELETE FROM public.orders WHERE id = ${target}`);
      await session.query('COMMIT');
    });

    const audit = await db.query<{
      operation: string;
      row_id: number;
      old_status: string | null;
      new_status: string | null;
    }>(
      `SELECT operation, row_id::int AS row_id, old_row->>'status' AS old_status, new_row->>'status' AS new_status
         FROM public.audit_log WHERE table_name = 'orders' ORDER BY id`,
    );
    expect(audit.rows).toHaveLength(2);
    expect(audit.rows[0]).toMatchObject({ operation: 'UPDATE', row_id: updated, new_status: 'cancelled' });
    expect(audit.rows[0]?.old_status).not.toBeNull();
    expect(audit.rows[1]).toMatchObject({ operation: 'DELETE', row_id: target, new_status: null });

    for (const child of ['order_items', 'payments', 'shipments']) {
      expect(
        await scalar<number>(db, `SELECT count(*)::int AS v FROM public.${child} WHERE order_id = ${target}`),
        child,
      ).toBe(0);
    }
    expect(await scalar<number>(db, 'SELECT count(*)::int AS v FROM public.order_items')).toBe(
      SAMPLE_ROW_COUNTS.order_items - items,
    );

    // unique e-mail, CHECK on quantity, RESTRICT on a customer with orders
    const email = await scalar<string>(db, 'SELECT email AS v FROM public.customers WHERE id = 1');
    expect(
      await sqlStateOf(
        db.query(
          "INSERT INTO public.customers (email, first_name, last_name, created_at) VALUES ($1, 'A', 'B', now())",
          [email],
        ),
      ),
    ).toBe('23505');
    expect(
      await sqlStateOf(
        db.query('INSERT INTO public.order_items (order_id, product_id, quantity, unit_price) VALUES (1, 499, 0, 1)'),
      ),
    ).toBe('23514');
    // 23001 restrict_violation (not 23503): the key is ON DELETE RESTRICT, not the default NO ACTION.
    expect(await sqlStateOf(db.query('DELETE FROM public.customers WHERE id = 1'))).toBe('23001');
  });

  it('rebuilds a directory whose generation never completed, or from another version', SLOW, async () => {
    const dataDir = freshDataDir();
    // What an interrupted generation without the completion marker looks like: a database, part of a schema.
    const partial = new PGlite(dataDir);
    await partial.exec('CREATE TABLE public.customers (id int PRIMARY KEY); INSERT INTO public.customers VALUES (1);');
    await partial.close();

    const logger = recordingLogger();
    const db = await open(dataDir, logger);
    expect(logger.lines.some((l) => /incomplete/.test(l.message))).toBe(true);
    expect(await rowCounts(db)).toEqual(SAMPLE_ROW_COUNTS);
    expect(
      await scalar<number>(
        db,
        "SELECT count(*)::int AS v FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'email'",
      ),
    ).toBe(1);
    expect(fs.readdirSync(path.dirname(dataDir))).toEqual(['sample-db']);
    await close(db);

    // A database generated by another version of the generator is replaced too.
    const older = new PGlite(dataDir);
    await older.exec("DELETE FROM public.reviews; COMMENT ON DATABASE postgres IS 'pgagent-sample-db v0: older';");
    await older.close();
    const upgradeLogger = recordingLogger();
    const upgraded = await open(dataDir, upgradeLogger);
    expect(upgradeLogger.lines.some((l) => /version 0 found/.test(l.message))).toBe(true);
    expect(await scalar<number>(upgraded, 'SELECT count(*)::int AS v FROM public.reviews')).toBe(
      SAMPLE_ROW_COUNTS.reviews,
    );
  });

  it('refuses to take over a folder that is not a database', async () => {
    const dataDir = freshDataDir();
    fs.mkdirSync(dataDir);
    const precious = path.join(dataDir, 'notes.txt');
    fs.writeFileSync(precious, 'keep me');

    const error = await openSampleDb({ dataDir, logger: silentLogger }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toMatchObject({ code: 'SAMPLE_DB_FAILED' });
    expect((error as AgentError).advice).toBeTruthy();
    expect(fs.readFileSync(precious, 'utf8')).toBe('keep me');
  });
});
