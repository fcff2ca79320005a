/**
 * `pg-agent guard` with two more clients nobody here wrote: Python's psycopg2 (Debian's python3-psycopg2,
 * libpq underneath; it opens a transaction before the first statement) and pgbench (`-S`, the select-only
 * run, passes; the default TPC-B-like run writes, and nothing of it commits).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import { workspacePaths } from '../../../src/core/config/workspace';
import { readHistory } from '../../../src/core/sql/history/readHistory';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, postgresAvailable } from '../../support/services';
import type { PgbenchTarget } from '../../support/toolRun';
import { pgbench, pgbenchInit, pgbenchTarget, runTool } from '../../support/toolRun';

const PYTHON = `
import sys, psycopg2
conn = psycopg2.connect(sys.argv[1], application_name='guard-psycopg2')
cur = conn.cursor()
cur.execute("SELECT abalance FROM pgbench_accounts WHERE aid = %s", (7,))
print("read", cur.fetchone()[0])
try:
    cur.execute("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = %s", (7,))
except psycopg2.Error as e:
    print("in-transaction", e.pgcode)
conn.rollback()
conn.autocommit = True
for attempt in sys.argv[2:]:
    try:
        cur.execute("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = %s", (7,))
        print("autocommit", cur.rowcount)
    except psycopg2.Error as e:
        print("autocommit", e.pgcode, e.pgerror.split("ticket ")[1].split(" ")[0])
conn.close()
`;

describe.skipIf(!postgresAvailable)('pg-agent guard with psycopg2 and pgbench', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let target: PgbenchTarget;

  beforeAll(async () => {
    db = await createScratchDatabase('pgagent_guard_bench');
    expect((await pgbenchInit(db.url)).code).toBe(0);
    guard = await startGuardProcess(db.url);
    target = pgbenchTarget(guard.url);
  }, 120_000);

  afterAll(async () => {
    await guard?.stop();
    await db?.drop();
  });

  it('psycopg2: reads pass, a write in its implicit transaction rolls it back, in autocommit it is held and then runs once', async () => {
    const first = await runTool('/usr/bin/python3', ['-c', PYTHON, guard.url, 'try'], { timeout: 60_000 });
    expect(first.stderr).toBe('');
    const lines = first.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['read 0', 'in-transaction PA002']);
    expect(lines[2]).toMatch(/^autocommit PA001 tkt_/);
    const ticket = lines[2]!.split(' ')[2]!;
    expect(await queryValue(db.url, 'SELECT abalance FROM pgbench_accounts WHERE aid = 7')).toBe(0);
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    const second = await runTool('/usr/bin/python3', ['-c', PYTHON, guard.url, 'try', 'again'], { timeout: 60_000 });
    expect(second.stdout.trim().split('\n').slice(2)).toEqual([
      'autocommit 1',
      expect.stringMatching(/^autocommit PA001 tkt_/),
    ]);
    expect(await queryValue(db.url, 'SELECT abalance FROM pgbench_accounts WHERE aid = 7')).toBe(1);
  });

  it('pgbench -S runs through the guard; its writing run commits nothing', async () => {
    const reads = await pgbench(['-S', '-n', '-c', '2', '-t', '50'], target);
    expect(reads.stderr).not.toContain('error');
    expect(reads.stdout).toContain('number of transactions actually processed: 100/100');
    const writes = await pgbench(['-n', '-c', '1', '-t', '3'], target);
    expect(writes.code).not.toBe(0);
    // The whole pgbench transaction is held at its END on one ticket (issue 24 P4), rolled back at once.
    expect(writes.stderr).toMatch(/held for approval: ticket tkt_[a-z0-9]+.*\n.*pgbench_history: 1 inserted/);
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM pgbench_history'))).toBe(0);
    expect(Number(await queryValue(db.url, 'SELECT sum(abalance) FROM pgbench_accounts'))).toBe(1);
  });

  it("the history counts pgbench's reads instead of keeping a line each: every read counted, once", async () => {
    // A read of this test's own, so that the earlier runs' reads are not counted with it.
    const script = join(mkdtempSync(join(tmpdir(), 'pgagent-guard-history-')), 'read.sql');
    writeFileSync(script, '\\set aid random(1, 100000)\nSELECT bid FROM pgbench_accounts WHERE aid = :aid;\n');
    const reads = await pgbench(['-n', '-f', script, '-c', '2', '-t', '150'], target);
    expect(reads.stdout).toContain('number of transactions actually processed: 300/300');
    await guard.stop(); // the window's counts are written when the guard stops
    const entries = await readHistory(workspacePaths(guard.workspace).history);
    const counted = entries.filter((e) => /^SELECT bid FROM pgbench_accounts WHERE aid = \d+;$/.test(e.sql));
    expect(counted.every((e) => e.origin === 'guard' && e.kind === 'read')).toBe(true);
    // An entry with `repeats` stands for that many runs; any other for one.
    expect(counted.reduce((n, e) => n + (e.repeats ?? 1), 0)).toBe(300);
    // A line for the first read, one for the counted rest (more only if a minute-long window closed during the run).
    expect(counted.length).toBeLessThan(10);
    expect(counted.some((e) => (e.repeats ?? 0) > 0)).toBe(true);
  });
});
