/**
 * The attacker's corpus for reach analysis (issue 21, SPEC §5 1a): objects a database owner created
 * beforehand — functions, triggers, views, operators, casts, domains, rules, policies, an event trigger — and
 * helpers that look at the server itself (files the server wrote, a victim session, pg_locks, another
 * connection's view of rows and sequences), never at our own output. Every effect is unique to its case:
 * each shell or file function writes its own file, each dblink call its own ledger note, each lock its own key.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { FileTicketStore } from '../../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../../src/core/db/connectionTarget';
import type { Db } from '../../src/core/db/db';
import { openPostgres } from '../../src/core/db/postgresDb';
import { silentLogger } from '../../src/core/platform/logger';
import type { ImpactReport } from '../../src/shared/impactReport';
import { RISK_ORDER } from '../../src/shared/impactReport';
import type { ReachVerdict } from '../../src/shared/reachTypes';
import { loadParser } from '../../src/core/sql/parse';
import type { SqlOutcome } from '../../src/core/sql/runSql';
import { runSql } from '../../src/core/sql/runSql';
import { DEFAULT_SAFETY } from '../../src/core/sql/safetySettings';
import type { ScratchDatabase } from './scratchDatabase';
import { ADMIN_DATABASE_URL, createScratchDatabase, execSql } from './scratchDatabase';

/** One test file's attacker: its database, the files its functions write, its lock keys and roles. */
export interface AttackWorld {
  url: string;
  token: string;
  /** Where the server-side function named `name` writes (the server runs as postgres and shares /tmp). */
  file(name: string): string;
  /** A session-level advisory lock key of this world (bigint), unique per file run. */
  key(n: number): number;
  /** A role name unique to this run (roles are cluster-wide). */
  role(name: string): string;
}

/** The OID of a large object the lo_export functions write out (large objects are per database). */
const LARGE_OBJECT = 4_242_421;

export function attackWorld(scratch: ScratchDatabase): AttackWorld {
  const token = randomBytes(4).toString('hex');
  const keyBase = 600_000_000 + randomBytes(3).readUIntBE(0, 3) * 16;
  return {
    url: scratch.url,
    token,
    file: (name) => join(tmpdir(), `pgagent_reach_${token}_${name}`),
    key: (n) => keyBase + n,
    role: (name) => `${name}_${token}`,
  };
}

/** A `LANGUAGE plpgsql` function `name()` returning int whose body runs `body` (static text). */
export function plpgsql(name: string, body: string, options = ''): string {
  return `CREATE FUNCTION ${name}() RETURNS int LANGUAGE plpgsql ${options} AS $f$ BEGIN ${body}; RETURN 1; END $f$;\n`;
}

/** A trigger function `name()` running `body`; it lets the row through (OLD for DELETE, NEW otherwise). */
export function triggerFn(name: string, body: string, options = ''): string {
  return `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql ${options} AS $f$ BEGIN ${body}; IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $f$;\n`;
}

/** Static text of a shell command on the server: `touch` of this function's own file. */
export function shellBody(world: AttackWorld, name: string): string {
  return `COPY (SELECT 1) TO PROGRAM 'touch ${world.file(name)}'`;
}

/** Static text writing this function's own server file from a large object. */
export function fileBody(world: AttackWorld, name: string): string {
  return `PERFORM lo_export(${LARGE_OBJECT}, '${world.file(name)}')`;
}

/** libpq connection text the server's dblink uses to reach this same database as another connection. */
export function dblinkConninfo(world: AttackWorld): string {
  const url = new URL(world.url);
  return `host=${url.hostname} port=${url.port || 5432} dbname=${url.pathname.slice(1)} user=${decodeURIComponent(url.username || 'postgres')}`;
}

/** Static text committing a ledger note through another connection (dblink) to this same database. */
export function dblinkBody(world: AttackWorld, note: string): string {
  return `PERFORM dblink_exec('${dblinkConninfo(world)}', 'INSERT INTO rt_ledger VALUES (''${note}'')')`;
}

/** What every corpus file needs: dblink, the ledger, the victims' table, a large object. */
export const ATTACK_BASE_SQL = `
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE TABLE rt_ledger (note text NOT NULL);
CREATE TABLE rt_victims (pid int NOT NULL);
SELECT lo_from_bytea(${LARGE_OBJECT}, 'contents of a large object');
CREATE FUNCTION rt_kill_victims() RETURNS int LANGUAGE plpgsql AS $f$ BEGIN PERFORM pg_terminate_backend(pid) FROM rt_victims; RETURN 1; END $f$;
CREATE FUNCTION rt_lock(k bigint) RETURNS int LANGUAGE plpgsql AS $f$ BEGIN PERFORM pg_advisory_lock(k); RETURN 1; END $f$;
`;

export async function installAttacks(world: AttackWorld, sql: string): Promise<void> {
  await execSql(world.url, ATTACK_BASE_SQL + sql);
}

/** Removes what the server wrote for this world (run after the assertions; only this run's files). */
export function removeServerFiles(world: AttackWorld): void {
  for (const name of readdirSync(tmpdir())) {
    if (name.startsWith(`pgagent_reach_${world.token}_`)) rmSync(join(tmpdir(), name), { force: true });
  }
}

export function serverFileExists(world: AttackWorld, name: string): boolean {
  return existsSync(world.file(name));
}

/** A Db of the code under test, as `user` when given (a role of this world). */
export function openAs(world: AttackWorld, user?: string): Promise<Db> {
  const url = new URL(world.url);
  if (user) url.username = user;
  return openPostgres(parseConnectionUrl(url.toString()), { logger: silentLogger });
}

/** One corpus file's attacker and the code under test, filled in by the hooks `useAttackScene` registers. */
export interface AttackScene {
  /** This file's attacker: its database holds ATTACK_BASE_SQL and the file's own objects. */
  readonly world: AttackWorld;
  /** A Db of its own per test: whatever a case leaves in the pool (a lock) dies with it, never misleading the next. */
  readonly db: Db;
  /** `runSql` (what `pg-agent sql` runs) on `on`, by default this test's Db, with this file's ticket store. */
  read: (sql: string, on?: Db) => Promise<Settled<SqlOutcome>>;
}

/**
 * Call inside `describe`: before all, a scratch database `pgagent_reach_<name>_…` with the attacks
 * `attacksSql` builds for its world; per test, a fresh Db; after all, the database, the files the server
 * wrote, the world's `roles` (cluster-wide) and the ticket folder are gone.
 */
export function useAttackScene(
  name: string,
  attacksSql: (world: AttackWorld) => string,
  roles: string[] = [],
): AttackScene {
  let scratch: ScratchDatabase | undefined;
  let ticketDir = '';
  let store: FileTicketStore;
  const scene = {
    read: (sql: string, on?: Db) =>
      settle(
        runSql(on ?? scene.db, store, {
          sql,
          connection: 'reach-corpus',
          requestedBy: 'tester',
          settings: DEFAULT_SAFETY,
        }),
      ),
  } as { world: AttackWorld; db: Db } & AttackScene;

  beforeAll(async () => {
    await loadParser();
    scratch = await createScratchDatabase(`pgagent_reach_${name}`);
    scene.world = attackWorld(scratch);
    await installAttacks(scene.world, attacksSql(scene.world));
    ticketDir = mkdtempSync(join(tmpdir(), `pgagent-reach-${name}-`));
  });
  beforeEach(async () => {
    scene.db = await openAs(scene.world);
    store = new FileTicketStore(ticketDir, { logger: silentLogger });
  });
  afterEach(async () => {
    await scene.db?.close();
  });
  afterAll(async () => {
    await scratch?.drop();
    if (scene.world) {
      removeServerFiles(scene.world);
      const drops = roles.map((role) => `DROP ROLE IF EXISTS ${scene.world.role(role)};`).join(' ');
      if (drops) await execSql(ADMIN_DATABASE_URL, drops);
    }
    if (ticketDir) rmSync(ticketDir, { recursive: true, force: true });
  });
  return scene;
}

/** Runs `work` on a plain pg client of its own (an independent observer of the server). */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function scalar(url: string, sql: string, params: unknown[] = []): Promise<unknown> {
  return withClient(
    url,
    async (c) => (await c.query<unknown[]>({ text: sql, values: params, rowMode: 'array' })).rows[0]?.[0],
  );
}

/** Session-level advisory locks held in this database by any session but the observer's. */
export async function advisoryLocksHeld(url: string): Promise<number> {
  return Number(
    await scalar(
      url,
      `SELECT count(*) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.pid <> pg_backend_pid()
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    ),
  );
}

/** Whether another session can take lock `key` at once (then gives it back). */
export async function lockIsFree(url: string, key: number): Promise<boolean> {
  return withClient(url, async (c) => {
    const taken =
      (await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key])).rows[0]?.ok === true;
    if (taken) await c.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    return taken;
  });
}

/** Asserts, from the server, that no advisory lock survived and another session can take `key` now. */
export async function expectNoLockLeft(url: string, key: number): Promise<void> {
  expect(await advisoryLocksHeld(url), 'advisory locks left held in pg_locks').toBe(0);
  expect(await lockIsFree(url, key), `another session could not take advisory lock ${key}`).toBe(true);
}

/** Rows another connection committed to rt_ledger under `note` (dblink writes outside our transaction). */
export async function ledgerRows(url: string, note: string): Promise<number> {
  return Number(await scalar(url, 'SELECT count(*) FROM rt_ledger WHERE note = $1', [note]));
}

export async function tableExists(url: string, name: string): Promise<boolean> {
  return (await scalar(url, 'SELECT to_regclass($1) IS NOT NULL', [name])) === true;
}

/** `last_value:is_called` of a sequence, read by another connection. */
export async function sequencePosition(url: string, sequence: string): Promise<string> {
  return String(await scalar(url, `SELECT last_value || ':' || is_called FROM ${sequence}`));
}

/** A session the attacker wants dead: registered in rt_victims, alive when `SELECT 1` still works. */
export interface Victim {
  pid: number;
  alive(): Promise<boolean>;
  close(): Promise<void>;
}

export async function openVictim(url: string): Promise<Victim> {
  const client = new pg.Client({ connectionString: url, application_name: 'reach-victim' });
  client.on('error', () => undefined);
  await client.connect();
  const pid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
  await execSql(url, `TRUNCATE rt_victims; INSERT INTO rt_victims VALUES (${pid})`);
  return {
    pid,
    alive: () =>
      client.query('SELECT 1').then(
        () => true,
        () => false,
      ),
    close: () => client.end().catch(() => undefined),
  };
}

/**
 * Runs `work` while a victim session is listed in rt_victims, then asserts the victim is still alive (nothing
 * `work` set off terminated it) and closes it; returns what `work` returned.
 */
export async function withVictim<T>(url: string, work: (victim: Victim) => Promise<T>): Promise<T> {
  const victim = await openVictim(url);
  try {
    const result = await work(victim);
    expect(await victim.alive(), 'the victim session was terminated').toBe(true);
    return result;
  } finally {
    await victim.close();
  }
}

/**
 * Runs `sql` on a probe session with lock_timeout 250 ms (SPEC §5 4a) over and over while `pending` runs, at
 * least once; returns the probes' errors (a preview that holds a lock others wait on shows up here).
 */
export async function probeWhile(url: string, sql: string, pending: Promise<unknown>): Promise<string[]> {
  let settled = false;
  const done = pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  return withClient(url, async (c) => {
    await c.query("SET lock_timeout = '250ms'");
    // A probe never hangs the test: whatever it waits on beyond the lock wait is cut off.
    await c.query("SET statement_timeout = '5s'");
    const errors: string[] = [];
    do {
      await c.query('BEGIN');
      await c.query(sql).catch((error: unknown) => errors.push(error instanceof Error ? error.message : String(error)));
      await c.query('ROLLBACK');
      await new Promise((resolve) => setTimeout(resolve, 50));
    } while (!settled);
    await done;
    return errors;
  });
}

/** A promise's outcome without throwing, so the server is checked whatever the code under test did. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function describeSettled(settled: Settled<unknown>): string {
  if (!settled.ok) return `threw ${settled.error instanceof Error ? settled.error.message : String(settled.error)}`;
  const value = settled.value as { status?: string };
  return `resolved${value.status ? ` with status ${value.status}` : ''}`;
}

/** SPEC §5 1a on the read path: held like a write, not a read, its reasons naming the function. */
export function expectHeldRead(outcome: Settled<SqlOutcome>, names: RegExp): void {
  expect(outcome.ok && outcome.value.status, describeSettled(outcome)).toBe('held');
  if (!outcome.ok) return;
  const { classification } = outcome.value;
  const [statement] = classification.statements;
  expect(statement?.class).not.toBe('read');
  expect([...(statement?.reasons ?? []), ...classification.reasons].join(' ')).toMatch(names);
  expect('result' in outcome.value).toBe(false);
  if (outcome.value.status === 'held') expect(outcome.value.ticket.status).toBe('PENDING_APPROVAL');
}

/** A read that must not have run, whatever stopped it (held, or refused by the READ ONLY transaction). */
export function expectNotExecuted(outcome: Settled<SqlOutcome>): void {
  expect(outcome.ok ? outcome.value.status : 'threw', describeSettled(outcome)).not.toBe('executed');
}

/**
 * SPEC §5 1a on the preview path: not previewed, a "Not previewed" warning naming the function or trigger,
 * risk at least `floor`, and the reach listing the function with its verdict.
 */
export function expectNotPreviewed(
  report: Settled<ImpactReport>,
  names: RegExp,
  floor: 'HIGH' | 'MEDIUM',
  verdicts: ReachVerdict[] = ['side-effect'],
): void {
  expect(report.ok, describeSettled(report)).toBe(true);
  if (!report.ok) return;
  const impact = report.value;
  expect(impact.previewed, `previewed; warnings: ${impact.warnings.join(' | ')}`).toBe(false);
  expect(impact.warnings.filter((w) => w.startsWith('Not previewed')).join(' | ')).toMatch(names);
  expect(RISK_ORDER.indexOf(impact.risk), `risk ${impact.risk}`).toBeGreaterThanOrEqual(RISK_ORDER.indexOf(floor));
  const named = impact.reach.filter((entry) => names.test(entry.function));
  expect(named.length, `reach: ${JSON.stringify(impact.reach)}`).toBeGreaterThan(0);
  expect(
    named.some((entry) => verdicts.includes(entry.verdict)),
    `reach: ${JSON.stringify(named)}`,
  ).toBe(true);
}

/** SPEC §5 1a on the EXPLAIN path: refused with SQL_REFUSED before anything was planned. */
export function expectRefused(outcome: Settled<unknown>): void {
  expect(outcome.ok ? 'resolved' : (outcome.error as { code?: string }).code, describeSettled(outcome)).toBe(
    'SQL_REFUSED',
  );
}
