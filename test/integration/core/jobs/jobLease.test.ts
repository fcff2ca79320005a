// One driver per job (issue 12): the lease in both backends (lock files, real Redis), stale takeover,
// fencing, and `pg-agent job` processes racing for one job on real PostgreSQL with the scripted model.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../../../src/core/platform/errors';
import type { LeaseBackend, LeaseHolder } from '../../../../src/core/jobs/jobLease';
import { JobLeases } from '../../../../src/core/jobs/jobLease';
import { FileLeaseBackend, RedisLeaseBackend } from '../../../../src/core/jobs/leaseBackends';
import { silentLogger } from '../../../../src/core/platform/logger';
import { runPgAgent } from '../../../support/cliHarness';
import { newJobAtReview } from '../../../support/jobScript';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { postgresAvailable } from '../../../support/services';
import { REDIS_URL, redisAvailable } from '../../../support/services';
import { scriptedModelEnv, useScriptedWorkspace, useShopScratch } from '../../../support/shopDatabase';

const JOB = 'job_0123456789abcdef';

async function busyError(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentError);
  return error as AgentError;
}

/** A process of this host that is alive until killed: a lease "held" by it is live. */
function liveProcess(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

function backendSuite(
  name: string,
  available: boolean,
  open: () => Promise<{ backend: LeaseBackend; close: () => Promise<void> }>,
) {
  describe.runIf(available)(`job leases in ${name}`, () => {
    let backend: LeaseBackend;
    let close: () => Promise<void>;
    const leases = (by = 'test') => new JobLeases(backend, { by, logger: silentLogger });

    beforeEach(async () => {
      ({ backend, close } = await open());
    });
    afterEach(async () => {
      await close();
    });

    it('lets one driver in and names it to the second; after release the second gets in with a larger token', async () => {
      const first = await leases('pg-agent job continue').acquire(JOB);
      const refused = await busyError(leases('VS Code').acquire(JOB));
      expect(refused.code).toBe('JOB_BUSY');
      expect(refused.message).toContain(`running in ${hostname()}:${process.pid} (pg-agent job continue) since`);
      await first.assertHeld();
      await first.release();
      const second = await leases('VS Code').acquire(JOB);
      expect(second.holder.token).toBeGreaterThan(first.holder.token);
      await second.release();
      expect(await leases().holder(JOB)).toBeUndefined();
    });

    it('of many drivers starting at the same moment, exactly one gets the job', async () => {
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => leases().acquire(JOB)));
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect((r.reason as AgentError).code).toBe('JOB_BUSY');
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<JobLeases['acquire']>>>).value.release();
    });

    it('takes over at once from a process of this host that is gone, and fences the old holder out', async () => {
      const child = liveProcess();
      const dead: LeaseHolder = {
        host: hostname(),
        pid: child.pid ?? 0,
        by: 'killed CLI',
        since: new Date().toISOString(),
        expiresAt: Date.now() + 60_000,
        token: 1,
        nonce: 'dead-holder',
      };
      expect(await backend.create(JOB, dead, 60_000)).toBe(true);
      expect((await busyError(leases().acquire(JOB))).message).toContain('(killed CLI)');
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const lease = await leases().acquire(JOB);
      expect(lease.holder.pid).toBe(process.pid);
      await lease.release();
    });

    it('takes over an expired lease of another machine, and the old driver cannot write any more', async () => {
      const old = await leases('laptop').acquire(JOB);
      const expired: LeaseHolder = { ...old.holder, host: 'another-machine', expiresAt: Date.now() - 1 };
      expect(await backend.replace(JOB, old.holder, expired, 60_000)).toBe(true);
      const fresh = await leases('desktop').acquire(JOB);
      const fenced = await busyError(old.assertHeld());
      expect(fenced.code).toBe('JOB_BUSY');
      expect(fenced.message).toContain('(desktop)');
      await old.release(); // must not remove the new holder's lease
      expect((await leases().holder(JOB))?.holder.nonce).toBe(fresh.holder.nonce);
      await fresh.release();
    });

    it('keeps a live lease of another machine until it expires (Take over refuses nothing only when asked)', async () => {
      const remote: LeaseHolder = {
        host: 'another-machine',
        pid: 1,
        by: 'VS Code',
        since: new Date().toISOString(),
        expiresAt: Date.now() + 60_000,
        token: 1,
        nonce: 'remote',
      };
      expect(await backend.create(JOB, remote, 60_000)).toBe(true);
      expect((await busyError(leases().acquire(JOB))).message).toContain('another-machine:1 (VS Code)');
      const taken = await leases().acquire(JOB, { takeOver: true });
      expect(taken.holder.host).toBe(hostname());
      await taken.release();
    });
  });
}

let fileRoot: string;
backendSuite('lock files', true, () => {
  fileRoot = mkdtempSync(join(tmpdir(), 'pgagent-leases-'));
  return Promise.resolve({
    backend: new FileLeaseBackend(fileRoot),
    close: () => Promise.resolve(rmSync(fileRoot, { recursive: true, force: true })),
  });
});
backendSuite('Redis', redisAvailable, () => {
  const redis = new Redis(REDIS_URL);
  const prefix = `pgagent-test:${randomBytes(6).toString('hex')}:`;
  return Promise.resolve({
    backend: new RedisLeaseBackend(redis, prefix),
    close: async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  });
});

describe.runIf(postgresAvailable)('pg-agent job processes racing for one job', () => {
  let scratch: ScratchDatabase;
  let server: ScriptedModelServer;
  let workspace: string;
  const cli = join(process.cwd(), 'dist', 'cli.js');
  const env = () => ({
    ...process.env,
    ...scriptedModelEnv(server),
    REDIS_URL: '',
  });
  const inProcess = (argv: string[]) =>
    runPgAgent(['job', '--db', scratch.url, '--workspace', workspace, ...argv], {
      cwd: workspace,
      env: scriptedModelEnv(server),
    });
  const inNewProcess = (argv: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [cli, 'job', '--db', scratch.url, '--workspace', workspace, ...argv],
        { cwd: workspace, env: env() },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });

  const shop = useShopScratch();
  beforeAll(() => void (scratch = shop.scratch));
  const rig = useScriptedWorkspace('pgagent-lease-job');
  beforeEach(() => void ({ server, workspace } = rig));

  const jobAtReview = () => newJobAtReview(server, inProcess);

  it('a second driver exits 1 with JOB_BUSY before any other check and without asking the model; after a kill -9 of the holder the job goes on at once', async () => {
    expect(existsSync(cli), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
    const id = await jobAtReview();
    const holder = liveProcess();
    const leasesDir = join(workspace, '.pgagent', 'leases');
    mkdirSync(leasesDir, { recursive: true });
    const lease: LeaseHolder = {
      host: hostname(),
      pid: holder.pid ?? 0,
      by: 'pg-agent job continue',
      since: new Date().toISOString(),
      expiresAt: Date.now() + 60_000,
      token: 7,
      nonce: 'held-by-child',
    };
    writeFileSync(join(leasesDir, `${id}.json`), JSON.stringify(lease));
    const asked = server.requests.length;
    // `job continue` at a review would say "waiting for the review": the lease is checked before that.
    const busy = await inNewProcess(['continue', id, '--json']);
    expect(busy.code, busy.stderr).toBe(1);
    const json = JSON.parse(busy.stdout) as { error: { code: string; message: string } };
    expect(json.error.code).toBe('JOB_BUSY');
    expect(json.error.message).toContain(`running in ${hostname()}:${holder.pid} (pg-agent job continue) since`);
    expect(server.requests.length).toBe(asked);
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    server.script([{ reply: { functionCall: { name: 'job_complete', args: { summary: 'nothing to do' } } } }]);
    const after = await inNewProcess(['approve', id, '--json']);
    expect(after.code, after.stderr).toBe(0);
    expect((JSON.parse(after.stdout) as { stop: { kind: string } }).stop.kind).toBe('completed');
    expect(existsSync(join(leasesDir, `${id}.json`))).toBe(false); // taken over, then released when the step ended
  });

  it('two CLIs approving one plan at the same moment: one drives, the other is told JOB_BUSY, and the plan is approved once', async () => {
    const id = await jobAtReview();
    // The driver's first tactical model call is slow, so the second process arrives while the first holds the job.
    server.script([
      {
        reply: { delayMs: 1500, then: { functionCall: { name: 'job_complete', args: { summary: 'nothing to do' } } } },
      },
    ]);
    const [a, b] = await Promise.all([
      inNewProcess(['approve', id, '--json']),
      inNewProcess(['approve', id, '--json']),
    ]);
    const codes = [a.code, b.code].sort();
    const busy = a.code === 1 ? a : b;
    expect(codes, `${a.stderr}\n---\n${b.stderr}`).toEqual([0, 1]);
    expect((JSON.parse(busy.stdout) as { error: { code: string } }).error.code).toBe('JOB_BUSY');
    const audit = readFileSync(join(workspace, '.pgagent', 'jobs', id, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; action?: string });
    expect(audit.filter((r) => r.type === 'review' && r.action === 'approve')).toHaveLength(1);
  });
});
