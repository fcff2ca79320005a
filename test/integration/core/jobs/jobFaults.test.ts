// Faults a job must survive (issue 12). Damaged job files: a broken todos.yaml, job.json or checkpoint stops the job with a message
// that names the file and the line and says how to repair it; nothing is overwritten, and once repaired the
// job goes on. Real PostgreSQL, the scripted Gemini server, `pg-agent job` in-process.
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../../support/cliHarness';
import { ARCHIVE, call, inTactical, PLAN_V1, planTurn, newJobAtReview } from '../../../support/jobScript';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { postgresAvailable } from '../../../support/services';
import { SHOP_FINGERPRINT } from '../../../support/shopSchema';
import { scriptedModelEnv, useScriptedWorkspace, useShopScratch } from '../../../support/shopDatabase';
import { queryValue } from '../../../support/scratchDatabase';
import { reservePort } from '../../../support/testCluster';

const redisServerInstalled = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    console.warn('SKIPPED: the private-Redis fault test needs the redis-server binary (apt-get install redis-server)');
    return false;
  }
})();

interface Failure {
  error: { code: string; message: string; advice?: string };
}

/** A redis-server of this test's own (loopback, every write fsynced to its append-only file), ready to answer. */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const redis = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return redis;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  redis.kill('SIGKILL');
  throw new Error(`redis-server did not start on port ${port}`);
}

describe.runIf(postgresAvailable)('a job with damaged files, or a store that dies under it', () => {
  let scratch: ScratchDatabase;
  let server: ScriptedModelServer;
  let workspace: string;
  const job = (argv: string[]) =>
    runPgAgent(['job', '--db', scratch.url, '--workspace', workspace, ...argv], {
      cwd: workspace,
      env: scriptedModelEnv(server),
    });
  const jobFile = (id: string, file: string) => join(workspace, '.pgagent', 'jobs', id, file);

  const jobAtReview = () => newJobAtReview(server, job);

  const shop = useShopScratch();
  beforeAll(() => void (scratch = shop.scratch));
  const rig = useScriptedWorkspace('pgagent-job-faults');
  beforeEach(() => void ({ server, workspace } = rig));

  it('a broken todos.yaml stops the tactical phase naming its line (never read as "no todos"), is kept as it is, and the job goes on once fixed', async () => {
    const id = await jobAtReview();
    const good = readFileSync(jobFile(id, 'todos.yaml'), 'utf8');
    const broken = `${good}- id: t2\n  title: [unclosed\n`;
    writeFileSync(jobFile(id, 'todos.yaml'), broken);
    const asked = server.requests.length;
    const stopped = await job(['approve', id, '--json']);
    expect(stopped.code, stopped.stderr).toBe(1);
    const failure = JSON.parse(stopped.stdout) as { stop: { kind: string; error?: { code: string; message: string } } };
    expect(failure.stop.kind).toBe('interrupted');
    expect(failure.stop.error?.code).toBe('CONFIG_INVALID');
    expect(failure.stop.error?.message).toMatch(/^todos\.yaml line \d+/);
    expect(server.requests.length).toBe(asked); // the model was not told "there are no pending todos"
    expect(readFileSync(jobFile(id, 'todos.yaml'), 'utf8')).toBe(broken);

    writeFileSync(jobFile(id, 'todos.yaml'), good);
    server.script([inTactical({ functionCall: call('job_complete', { summary: 'done' }) })]);
    const resumed = await job(['continue', id, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as { stop: { kind: string } }).stop.kind).toBe('completed');
    const tactical = server.requests.at(-1)?.text ?? '';
    expect(tactical).toContain('Pending todos: t1.');
  });

  it.runIf(redisServerInstalled)(
    'a private Redis killed while a job waits for a decision: a clear error and nothing run; restarted, the ticket is still there and the job goes on once',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pgagent-redis-'));
      // Reserved until the test ends: the Redis restarts on the same port, and nobody may take it in between.
      const { port, release } = await reservePort();
      const redisUrl = `redis://127.0.0.1:${port}`;
      const start = () => startRedis(port, dir);
      let redis = await start();
      const withRedis = (argv: string[]) =>
        runPgAgent(['job', '--db', scratch.url, '--workspace', workspace, ...argv], {
          cwd: workspace,
          env: { ...scriptedModelEnv(server), REDIS_URL: redisUrl },
        });
      try {
        const fingerprint = await queryValue(scratch.url, SHOP_FINGERPRINT);
        server.script(planTurn(PLAN_V1));
        const created = await withRedis(['new', '--json', '--', 'Archive cancelled orders']);
        expect(created.code, created.stderr).toBe(0);
        const id = (JSON.parse(created.stdout) as { job: { id: string } }).job.id;
        server.script([inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) })]);
        const held = await withRedis(['approve', id, '--json']);
        expect(held.code, held.stderr).toBe(3);
        const ticket = (JSON.parse(held.stdout) as { stop: { ticketId: string } }).stop.ticketId;

        redis.kill('SIGKILL');
        await new Promise((resolve) => redis.once('exit', resolve));
        const asked = server.requests.length;
        const down = await withRedis(['continue', id, '--json']);
        expect(down.code).toBe(1);
        const failure = JSON.parse(down.stdout) as { error: { code: string; message: string } };
        expect(failure.error.code).toBe('REDIS_UNREACHABLE');
        expect(failure.error.message).toContain(`127.0.0.1:${port}`);
        expect(server.requests.length).toBe(asked);
        expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);

        redis = await start(); // the same data folder: the append-only file brings the ticket back
        const approved = await runPgAgent(['approvals', 'approve', ticket, '--workspace', workspace], {
          cwd: workspace,
          env: { USER: 'teammate', REDIS_URL: redisUrl },
        });
        expect(approved.code, approved.stderr).toBe(0);
        server.script([inTactical({ functionCall: call('job_complete', { summary: 'archived' }) })]);
        const done = await withRedis(['continue', id, '--json']);
        expect(done.code, done.stderr).toBe(0);
        expect((JSON.parse(done.stdout) as { stop: { kind: string } }).stop.kind).toBe('completed');
        expect(
          Number(await queryValue(scratch.url, "SELECT count(*) FROM orders WHERE status = 'archived'")),
        ).toBeGreaterThan(0);
        const again = await runPgAgent(['exec', '--ticket', ticket, '--db', scratch.url, '--workspace', workspace], {
          cwd: workspace,
          env: { USER: 'tester', REDIS_URL: redisUrl },
        });
        expect(again.code).not.toBe(0); // spent: it ran once
      } finally {
        redis.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        release();
      }
    },
  );

  it('a broken job.json is reported with its path and line and how to restore it, and is not overwritten', async () => {
    const id = await jobAtReview();
    const text = readFileSync(jobFile(id, 'job.json'), 'utf8');
    const broken = text.replace('"status"', '"status" "oops"');
    writeFileSync(jobFile(id, 'job.json'), broken);
    for (const argv of [
      ['show', id, '--json'],
      ['approve', id, '--json'],
    ]) {
      const run = await job(argv);
      expect(run.code, run.stderr).not.toBe(0);
      const failure = JSON.parse(run.stdout) as Failure;
      expect(failure.error.code).toBe('CONFIG_INVALID');
      expect(failure.error.message).toContain(jobFile(id, 'job.json'));
      expect(failure.error.message).toMatch(/\(line \d+\)/);
      expect(failure.error.advice).toContain('.history');
    }
    expect(readFileSync(jobFile(id, 'job.json'), 'utf8')).toBe(broken);
  });

  it('a damaged checkpoint is named, never read as "no checkpoint" (which would restart the job), and moving it aside resumes from the one before', async () => {
    const id = await jobAtReview();
    const dir = join(workspace, '.pgagent', 'checkpoints', id);
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.json') && !f.endsWith('.writes.json'))
      .sort();
    const newest = join(dir, files.at(-1) ?? '');
    writeFileSync(newest, '{"id": "truncated');
    const asked = server.requests.length;
    const run = await job(['approve', id, '--json']);
    expect(run.code, run.stderr).not.toBe(0);
    const failure = JSON.parse(run.stdout) as Failure;
    expect(failure.error.code).toBe('CONFIG_INVALID');
    expect(failure.error.message).toContain(newest);
    expect(failure.error.advice).toContain('resumes from the checkpoint before it');
    expect(server.requests.length).toBe(asked);
    expect(readFileSync(newest, 'utf8')).toBe('{"id": "truncated');

    renameSync(newest, `${newest}.damaged`);
    const shown = await job(['show', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
  });
});
