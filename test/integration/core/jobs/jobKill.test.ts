// kill -9 of a `pg-agent job` process at every step boundary of one job's life (issue 12): each process is
// killed while it waits for the model (the scripted server holds that reply), and a new process goes on
// from what the killed one left on disk. Nothing is lost, nothing runs twice, no ticket is made twice.
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { silentLogger } from '../../../../src/core/platform/logger';
import { runPgAgent } from '../../../support/cliHarness';
import {
  ARCHIVE,
  call,
  inStrategic,
  inTactical,
  PLAN_V1,
  planTurn,
  strategic,
  tactical,
} from '../../../support/jobScript';
import { queryValue } from '../../../support/scratchDatabase';
import type { RecordedRequest, Rule, ScriptedModelServer } from '../../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { SHOP_SCHEMA } from '../../../support/shopSchema';
import { scriptedModelEnv } from '../../../support/shopDatabase';

/** The model call the killed process waits for: held far longer than the test takes to kill it. */
const hang = (match: (req: RecordedRequest) => boolean): Rule => ({
  match,
  reply: { delayMs: 120_000, then: { text: 'too late' } },
});

describe.runIf(postgresAvailable)('kill -9 of a pg-agent job process at each step boundary', () => {
  let scratch: ScratchDatabase;
  let server: ScriptedModelServer;
  let workspace: string;
  const cli = join(process.cwd(), 'dist', 'cli.js');
  const args = (argv: string[]) => [cli, 'job', '--db', scratch.url, '--workspace', workspace, ...argv];
  const env = () => ({
    ...process.env,
    ...scriptedModelEnv(server),
    REDIS_URL: '',
  });

  /** Runs `pg-agent job …` and kills it (SIGKILL) once the model has received its `nth` request in all. */
  async function killedWhileAsking(argv: string[], nth: number): Promise<void> {
    const child = spawn(process.execPath, args(argv), {
      cwd: workspace,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    for (let waited = 0; server.requests.length < nth; waited += 20) {
      if (child.exitCode !== null || waited > 30_000)
        throw new Error(
          `pg-agent job ${argv.join(' ')} never asked the model for request ${nth} (exit ${child.exitCode}): ${stderr}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill('SIGKILL');
    expect(await exited).toBeNull(); // killed, not exited
  }

  function inNewProcess(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, args(argv), { cwd: workspace, env: env() }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  const tickets = () => new FileTicketStore(join(workspace, '.pgagent', 'approvals'), { logger: silentLogger });
  async function ticketsOf(kind: 'plan' | 'write'): Promise<{ id: string; status: string }[]> {
    const store = tickets();
    try {
      return (await store.list()).filter((t) => t.kind === kind).map((t) => ({ id: t.id, status: t.status }));
    } finally {
      await store.close();
    }
  }
  const archived = async () =>
    Number(await queryValue(scratch.url, "SELECT count(*) FROM orders WHERE status = 'archived'"));
  const auditRows = async () =>
    Number(
      await queryValue(
        scratch.url,
        "SELECT count(*) FROM audit_log WHERE table_name = 'orders' AND operation = 'UPDATE'",
      ),
    );

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, SHOP_SCHEMA);
    server = await startScriptedModelServer();
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-job-kill-'));
  });
  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('a job killed at every model call still plans once, holds one ticket per write, and runs its write exactly once', async () => {
    expect(existsSync(cli), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
    const [workspaceTurn, planReady] = planTurn(PLAN_V1);
    if (!workspaceTurn || !planReady) throw new Error('planTurn changed');

    // 1. `job new` killed while asking for the plan: the job folder exists, planning, nothing planned yet.
    server.script([hang(strategic)]);
    await killedWhileAsking(['new', '--', 'Archive cancelled orders'], 1);
    const ids = readdirSync(join(workspace, '.pgagent', 'jobs'));
    expect(ids).toHaveLength(1);
    const id = ids[0] ?? '';
    expect(JSON.parse(readFileSync(join(workspace, '.pgagent', 'jobs', id, 'job.json'), 'utf8'))).toMatchObject({
      status: 'planning',
    });

    // 2. `continue` writes the plan files, then is killed asking for plan_ready.
    server.script([workspaceTurn, hang(strategic)]);
    await killedWhileAsking(['continue', id], 3);
    expect(readFileSync(join(workspace, '.pgagent', 'jobs', id, 'plan.md'), 'utf8')).toBe(PLAN_V1);

    // 3. A new process finishes planning: one review, one plan ticket (the killed ones made none).
    server.script([planReady]);
    const review = await inNewProcess(['continue', id, '--json']);
    expect(review.code, review.stderr).toBe(0);
    expect(JSON.parse(review.stdout)).toMatchObject({ stop: { kind: 'review', cycle: 1 } });
    expect(await ticketsOf('plan')).toEqual([{ id: expect.any(String) as string, status: 'PENDING_APPROVAL' }]);
    // The model was asked again only what the killed processes never got an answer to.
    expect(server.requests.filter(strategic)).toHaveLength(4);

    // 4. `approve` decides the plan, then is killed asking for the first tactical step.
    server.script([hang(tactical)]);
    await killedWhileAsking(['approve', id], 5);
    expect(await ticketsOf('plan')).toEqual([{ id: expect.any(String) as string, status: 'EXECUTED' }]);

    // 5. A new process goes on: the write is held with one ticket, nothing has changed in the database.
    server.script([inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) })]);
    const held = await inNewProcess(['continue', id, '--json', '--no-input']);
    expect(held.code, held.stderr).toBe(3);
    const writes = await ticketsOf('write');
    expect(writes).toEqual([{ id: expect.any(String) as string, status: 'PENDING_APPROVAL' }]);
    const ticket = writes[0]?.id ?? '';
    expect(await archived()).toBe(0);

    // 6. Approved from a terminal; the `continue` that runs it is killed asking the model what next.
    const approval = await runPgAgent(['approvals', 'approve', ticket, '--workspace', workspace], {
      cwd: workspace,
      env: { USER: 'teammate' },
    });
    expect(approval.code, approval.stderr).toBe(0);
    server.script([hang(tactical)]);
    await killedWhileAsking(['continue', id], 7);
    expect(await archived()).toBe(2);

    // 7. The next process does not run the write again; killed once more while re-planning.
    server.script([
      inTactical({
        functionCalls: [
          call('update_todo', { id: 't1', status: 'done' }),
          call('finish_phase', { summary: 'archived 2 orders' }),
        ],
      }),
      hang(strategic),
    ]);
    await killedWhileAsking(['continue', id], 9);
    expect(await archived()).toBe(2);

    // 8. The last process completes the job.
    server.script([
      inStrategic({ functionCall: call('job_complete', { summary: 'Archived the cancelled orders among ids 1-10.' }) }),
    ]);
    const done = await inNewProcess(['continue', id, '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      stop: { kind: 'completed' },
      todos: [{ id: 't1', status: 'done' }],
    });

    // Exactly once: two orders, two trigger rows, one executed ticket, one plan ticket, no live lease.
    expect(await archived()).toBe(2);
    expect(await auditRows()).toBe(2);
    expect(await ticketsOf('write')).toEqual([{ id: ticket, status: 'EXECUTED' }]);
    expect(await ticketsOf('plan')).toHaveLength(1);
    const executions = readFileSync(join(workspace, '.pgagent', 'jobs', id, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; outcome?: string; sql?: string })
      .filter((event) => event.type === 'sql' && event.outcome === 'executed');
    expect(executions.map((e) => e.sql)).toEqual([ARCHIVE]);
    expect(existsSync(join(workspace, '.pgagent', 'leases', `${id}.json`))).toBe(false);
  });
});
