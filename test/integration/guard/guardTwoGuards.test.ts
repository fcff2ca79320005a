/**
 * Two guards, one store: two guard processes in front of one database share the Redis ticket store (a key
 * prefix of this test's own) and one workspace. A write held by one guard is approved once and runs once,
 * whichever guard its retry reaches, also when the retry reaches both at the same moment: the table has one
 * row, the ticket is EXECUTED once. `guard status` lists both guards; killing one (-9) leaves the other serving.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable, REDIS_URL, redisAvailable } from '../../support/services';

const INSERT = "INSERT INTO payments (note) VALUES ('once')";

async function send(url: string, sql: string): Promise<{ ok: boolean; code?: string; message?: string }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(sql);
    return { ok: true };
  } catch (error) {
    const e = error as pg.DatabaseError;
    return { ok: false, ...(e.code ? { code: e.code } : {}), message: e.message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe.skipIf(!postgresAvailable || !redisAvailable)('two guards sharing one Redis ticket store', () => {
  const prefix = `i38-two-guards:${randomBytes(6).toString('hex')}:`;
  const env = { REDIS_URL, PGAGENT_REDIS_PREFIX: prefix };
  let db: ScratchDatabase;
  let a: GuardProcess;
  let b: GuardProcess;
  /** alice's URL at guard b (one workspace, one users file). */
  let aliceAtB: string;
  const rows = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM payments'));

  beforeAll(async () => {
    db = await createScratchDatabase('pgagent_i38_two_guards');
    await execSql(db.url, 'CREATE TABLE payments (id serial PRIMARY KEY, note text NOT NULL)');
    const workspace = mkdtempSync(join(tmpdir(), 'pgagent-i38-two-guards-'));
    a = await startGuardProcess(db.url, { workspace, user: 'alice', env });
    b = await startGuardProcess(db.url, { workspace, user: 'bob', env });
    const url = new URL(a.url);
    url.port = String(b.port);
    aliceAtB = url.toString();
  }, 90_000);

  afterAll(async () => {
    await a?.stop().catch(() => undefined);
    await b?.stop().catch(() => undefined);
    await db?.drop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('runs a write held by one guard once when its retry reaches both guards at the same moment', async () => {
    const held = await send(a.url, INSERT);
    expect(held.code).toBe('PA001');
    const ticket = /ticket (tkt_[a-z0-9]+)/.exec(held.message ?? '')?.[1] ?? '';
    // The other guard finds the same ticket in the shared store instead of opening another.
    const again = await send(aliceAtB, INSERT);
    expect(again.code).toBe('PA001');
    expect(again.message).toContain(ticket);
    expect(await rows()).toBe(0);

    const approved = await b.pgAgent(['approvals', 'approve', ticket]);
    expect(approved.code, approved.stderr).toBe(0);
    const retries = await Promise.all([send(a.url, INSERT), send(aliceAtB, INSERT), send(b.url, INSERT)]);
    expect(retries.filter((r) => r.ok).length).toBe(1);
    expect(await rows()).toBe(1);
    const shown = await a.pgAgent(['approvals', 'show', ticket, '--json']);
    expect((JSON.parse(shown.stdout) as { status: string }).status).toBe('EXECUTED');

    const status = JSON.parse((await a.pgAgent(['guard', 'status', '--json'])).stdout) as {
      guards: { pid: number }[];
    };
    expect(status.guards.map((g) => g.pid).sort()).toEqual([a.child.pid, b.child.pid].sort());
  });

  it('keeps serving through the other guard when one is killed (-9)', async () => {
    await a.kill();
    expect((await send(aliceAtB, 'SELECT 1')).ok).toBe(true);
    const held = await send(aliceAtB, "INSERT INTO payments (note) VALUES ('after the kill')");
    expect(held.code).toBe('PA001');
    expect(await rows()).toBe(1);
  });
});
