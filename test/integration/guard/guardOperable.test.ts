/**
 * `pg-agent guard --metrics HOST:PORT --log-format json --log-file FILE` (dist/cli.js, its own process): the
 * Prometheus endpoint scraped with real HTTP requests while psql reads and has a write held through the
 * guard, its counters moving by exactly what psql sent; the log parsed as JSON lines with a line per
 * session and per statement (client address, guard user, verdict, ticket, duration), and a password sent in
 * `ALTER ROLE … PASSWORD` nowhere in it. Bad flags are refused before the guard starts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { psqlRun, ticketIn } from '../../support/psqlRun';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

/** GET /metrics: each sample line as `series → value`. */
async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const verdictCount = (m: Map<string, number>, verdict: string) =>
  m.get(`pg_agent_guard_statements_total{verdict="${verdict}"}`) ?? 0;
const latencyCount = (m: Map<string, number>, verdict: string) =>
  m.get(`pg_agent_guard_statement_seconds_count{verdict="${verdict}"}`) ?? 0;

type LogLine = Record<string, unknown>;

describe.skipIf(!postgresAvailable)('pg-agent guard --metrics and --log-format json', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let metricsUrl: string;
  let logFile: string;
  const role = `i38o_role_${randomBytes(4).toString('hex')}`;
  const password = `i38o-Secret-${randomBytes(6).toString('hex')}`;
  const log = (): LogLine[] =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogLine);

  beforeAll(async () => {
    db = await createScratchDatabase('i38o_metrics');
    await execSql(
      db.url,
      `CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 3) g; CREATE ROLE ${role}`,
    );
    logFile = join(db.name, 'guard.log');
    guard = await startGuardProcess(db.url, {
      args: ['--metrics', '127.0.0.1:0', '--log-format', 'json', '--log-file', 'guard.log'],
    });
    logFile = join(guard.workspace, 'guard.log');
    metricsUrl = /metrics at (http:\/\/\S+\/metrics)/.exec(guard.stderr())?.[1] ?? '';
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  }, 60_000);

  afterAll(async () => {
    await guard?.stop();
    await db?.drop();
    await execSql(db.url.replace(/\/[^/]*$/, '/postgres'), `DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
  });

  it('counts psql reads as passed and its write as held, with a waiting ticket, clients and upstream sessions', async () => {
    const before = await scrape(metricsUrl);
    expect(before.get('pg_agent_guard_tickets_waiting')).toBe(0);
    const reads = await psqlRun(guard.url, ['SELECT count(*) FROM t', 'SELECT v FROM t WHERE id = 2', 'SELECT 1']);
    expect(reads.code).toBe(0);
    expect(reads.stdout).toBe('3\nv2\n1\n');
    const write = await psqlRun(guard.url, ["UPDATE t SET v = 'x' WHERE id = 1"]);
    expect(write.stderr).toContain('PA001');
    const ticket = ticketIn(write.stderr);
    expect(ticket).toMatch(/^tkt_/);
    expect(await queryValue(db.url, 'SELECT v FROM t WHERE id = 1')).toBe('v1');

    // One client connected now, on its own upstream session.
    const open = new pg.Client({ connectionString: guard.url, application_name: 'i38o-metrics-open' });
    await open.connect();
    try {
      await open.query('SELECT 1');
      const after = await scrape(metricsUrl);
      expect(verdictCount(after, 'passed') - verdictCount(before, 'passed')).toBe(4);
      expect(latencyCount(after, 'passed') - latencyCount(before, 'passed')).toBe(4);
      expect(verdictCount(after, 'held') - verdictCount(before, 'held')).toBe(1);
      expect(latencyCount(after, 'held') - latencyCount(before, 'held')).toBe(1);
      expect(verdictCount(after, 'refused') - verdictCount(before, 'refused')).toBe(0);
      expect(after.get('pg_agent_guard_statement_seconds_bucket{verdict="held",le="+Inf"}')).toBe(
        latencyCount(after, 'held'),
      );
      expect(after.get('pg_agent_guard_clients')).toBe(1);
      expect(after.get('pg_agent_guard_upstream_sessions')).toBe(1);
      expect(
        after.get('pg_agent_guard_client_sessions_total')! - (before.get('pg_agent_guard_client_sessions_total') ?? 0),
      ).toBe(3);
      expect(after.get('pg_agent_guard_tickets_waiting')).toBe(1);
      expect(after.get('pg_agent_guard_ticket_oldest_waiting_seconds')).toBeGreaterThan(0);
      expect(after.get('pg_agent_guard_ticket_store_up')).toBe(1);
    } finally {
      await open.end();
    }

    // Decided, it no longer waits.
    expect((await guard.pgAgent(['approvals', 'reject', ticket, '--comment', 'metrics test'])).code).toBe(0);
    const decided = await scrape(metricsUrl);
    expect(decided.get('pg_agent_guard_tickets_waiting')).toBe(0);
    expect(decided.get('pg_agent_guard_ticket_oldest_waiting_seconds')).toBe(0);

    // The log: JSON lines, a statement line per statement with who sent it and what became of it.
    const lines = log();
    const statements = lines.filter((l) => l.event === 'statement');
    const held = statements.filter((l) => l.verdict === 'held');
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ level: 'info', user: 'alice', ticket, protocol: 'simple' });
    expect(held[0]!.client).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(typeof held[0]!.ms).toBe('number');
    expect(typeof held[0]!.time).toBe('string');
    expect(statements.filter((l) => l.verdict === 'passed')).toHaveLength(4);
    const sessions = lines.filter((l) => l.event === 'session.end');
    expect(sessions).toHaveLength(3);
    expect(sessions.map((s) => s.statements).sort()).toEqual([1, 1, 3]);
    for (const s of sessions) {
      expect(s.user).toBe('alice');
      expect(s.client).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(typeof s.ms).toBe('number');
    }
    expect(lines.filter((l) => l.event === 'session.start')).toHaveLength(3);
    // Statement text never: not the UPDATE's value, not the read's.
    expect(readFileSync(logFile, 'utf8')).not.toContain("'x'");
    expect(readFileSync(logFile, 'utf8')).not.toContain('UPDATE');
  });

  it('never writes the password of a held ALTER ROLE … PASSWORD to the log, stderr or the metrics', async () => {
    const held = await psqlRun(guard.url, [`ALTER ROLE ${role} PASSWORD '${password}'`]);
    expect(held.stderr).toContain('PA001');
    const ticket = ticketIn(held.stderr);
    expect(log().filter((l) => l.event === 'statement' && l.ticket === ticket)).toHaveLength(1);
    expect(readFileSync(logFile, 'utf8')).not.toContain(password);
    expect(guard.stderr()).not.toContain(password);
    expect(await (await fetch(metricsUrl)).text()).not.toContain(password);
    // Nothing ran: the role still has no password.
    expect(await queryValue(db.url, `SELECT rolpassword IS NULL FROM pg_authid WHERE rolname = '${role}'`)).toBe(true);
  });

  it('answers 404 beside /metrics, and refuses bad operator flags before starting (exit 2)', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/'))).status).toBe(404);
    for (const flags of [
      ['--metrics', 'nowhere'],
      ['--log-format', 'xml'],
      ['--metrics', '127.0.0.1:99999'],
    ]) {
      const run = await guard.pgAgent(['guard', '--listen', '127.0.0.1:0', ...flags]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--metrics|--log-format/);
    }
  });
});
