// `pg-agent job` on real PostgreSQL with the scripted Gemini server as the only fake: plan → review →
// revise → approve → held write (exit 3) → approvals approve → continue in a new Node process → completed.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run';
import { runPgAgent } from '../../support/cliHarness';
import {
  ARCHIVE,
  call,
  FEEDBACK,
  inStrategic,
  inTactical,
  PLAN_V1,
  PLAN_V2,
  planTurn,
  reviewChat,
  newJobAtReview,
} from '../../support/jobScript';
import { queryValue } from '../../support/scratchDatabase';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { SHOP_FINGERPRINT } from '../../support/shopSchema';
import { scriptedModelEnv, useScriptedWorkspace, useShopScratch } from '../../support/shopDatabase';

interface JobJson {
  job: { id: string; status: string; reviewCycles: number; title: string };
  stop: { kind: string; cycle?: number; ticketId?: string; sql?: string; summary?: string };
  todos: { id: string; status: string }[];
  planChange: { fromCycle: number; toCycle: number; diff: string } | null;
  usage: { calls: number; inputTokens: number };
  plan: string;
  ticket?: { id: string; status: string };
  execution?: { ticketId: string; rows: number; undoFile: string };
}

const JOB_ID = /job_[0-9a-f]{16}/;

describe.runIf(postgresAvailable)('pg-agent job on PostgreSQL with a scripted model', () => {
  let scratch: ScratchDatabase;
  let server: ScriptedModelServer;
  let workspace: string;
  const env = () => scriptedModelEnv(server);
  const job = (argv: string[], options: { stdin?: string; answers?: string[]; env?: Record<string, string> } = {}) =>
    runPgAgent(['job', '--db', scratch.url, '--workspace', workspace, ...argv], {
      cwd: workspace,
      ...options,
      env: options.env ?? env(),
    });
  const jobDir = (id: string) => join(workspace, '.pgagent', 'jobs', id);
  const read = (id: string, path: string) => readFileSync(join(jobDir(id), path), 'utf8');

  /** A new job stopped at its first plan review. */
  const jobAtReview = () => newJobAtReview(server, job);

  const shop = useShopScratch();
  beforeAll(() => void (scratch = shop.scratch));

  const rig = useScriptedWorkspace('pgagent-cli-job');
  beforeEach(() => void ({ server, workspace } = rig));

  it('plans to a review, revises with feedback, holds the write (exit 3), and a new process completes it once approved', async () => {
    const fingerprint = await queryValue(scratch.url, SHOP_FINGERPRINT);
    server.script([
      inStrategic({ functionCall: call('count_rows', { table: 'orders', where: "status = 'cancelled'" }) }),
      ...planTurn(PLAN_V1),
    ]);
    const created = await job(['new', '--title', 'Archive', '--', 'Archive cancelled orders\nKeep the customers.']);
    expect(created.code, created.stderr).toBe(0);
    const id = JOB_ID.exec(created.stdout)?.[0] ?? '';
    expect(id).not.toBe('');
    expect(created.stdout).toContain('1. Archive all cancelled orders in one statement.');
    expect(created.stdout).toContain('[ ] t1  Archive the first cancelled orders');
    expect(created.stdout).toContain(`pg-agent job approve ${id}`);
    expect(created.stdout).toContain(`pg-agent job revise ${id} --feedback`);
    expect(created.stderr).toContain(`[${id}] pending_review`); // progress goes to stderr
    for (const file of ['job.json', 'workspace.md', 'plan.md', 'todos.yaml'])
      expect(existsSync(join(jobDir(id), file)), file).toBe(true);
    expect(read(id, 'plan.md')).toBe(PLAN_V1);
    expect(JSON.parse(read(id, 'job.json'))).toMatchObject({
      id,
      title: 'Archive',
      status: 'pending_review',
      reviewCycles: 1,
    });

    // Feedback from stdin: dated under "## Review Feedback" in workspace.md, and in the next model request.
    server.script(planTurn(PLAN_V2));
    const before = server.requests.length;
    const revised = await job(['revise', id, '--feedback', '-', '--json'], { stdin: `${FEEDBACK}\n` });
    expect(revised.code, revised.stderr).toBe(0);
    const afterRevise = JSON.parse(revised.stdout) as JobJson;
    expect(afterRevise.stop).toMatchObject({ kind: 'review', cycle: 2 });
    expect(afterRevise.plan).toBe(PLAN_V2);
    expect(afterRevise.planChange?.diff).toContain('+1. Archive cancelled orders in batches of 10 ids.');
    expect(read(id, 'workspace.md')).toMatch(
      /## Review Feedback\n\n### \d{4}-\d\d-\d\dT[\d:.]+Z\n\nSplit the archive into batches/,
    );
    expect(server.requests[before]?.text).toContain(FEEDBACK);

    const shown = await job(['show', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const detail = JSON.parse(shown.stdout) as JobJson;
    expect(detail).toMatchObject({
      job: { id, status: 'pending_review', reviewCycles: 2 },
      stop: { kind: 'review', cycle: 2 },
      todos: [{ id: 't1', status: 'pending' }],
      planChange: { fromCycle: 1, toCycle: 2 },
      usage: { calls: 5, inputTokens: 5000 },
      plan: PLAN_V2,
    });
    const human = await job(['show', id]);
    expect(human.stdout).toContain('Plan changes since review 1 (now review 2):');
    expect(human.stdout).toContain('-1. Archive all cancelled orders in one statement.');
    expect(human.stdout).toContain('Model: 5 call(s)');

    const listed = JSON.parse((await job(['list', '--json'])).stdout) as { jobs: { id: string; status: string }[] };
    expect(listed.jobs).toEqual([expect.objectContaining({ id, status: 'pending_review' })]);
    expect(JSON.parse((await job(['list', '--status', 'completed', '--json'])).stdout)).toEqual({ jobs: [] });

    // Approve: the write is held with a ticket and nothing changes.
    server.script([inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) })]);
    const held = await job(['approve', id, '--comment', 'go', '--no-input', '--json']);
    expect(held.code, held.stderr).toBe(3);
    const heldOut = JSON.parse(held.stdout) as JobJson;
    expect(heldOut.stop).toMatchObject({ kind: 'approval', sql: ARCHIVE });
    expect(heldOut.ticket).toMatchObject({ id: heldOut.stop.ticketId, status: 'PENDING_APPROVAL' });
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    const ticket = heldOut.ticket?.id ?? '';

    // Still undecided: continue says so and how to go on, exit 3 again, nothing runs.
    const pending = await job(['continue', id, '--no-input']);
    expect(pending.code, pending.stderr).toBe(3);
    expect(pending.stdout).toContain(`pg-agent approvals approve ${ticket}`);
    expect(pending.stdout).toContain(`pg-agent job continue ${id}`);
    expect(pending.stdout).toContain('risk LOW');

    const approval = await runPgAgent(['approvals', 'approve', ticket, '--workspace', workspace], {
      cwd: workspace,
      env: { USER: 'teammate' },
    });
    expect(approval.code, approval.stderr).toBe(0);

    // The job goes on in a new Node process: only the files under .pgagent/ carry it over.
    server.script([
      inTactical({
        functionCalls: [
          call('update_todo', { id: 't1', status: 'done' }),
          call('finish_phase', { summary: 'archived 2 orders' }),
        ],
      }),
      inStrategic({ functionCall: call('job_complete', { summary: 'Archived the cancelled orders among ids 1-10.' }) }),
    ]);
    const cli = join(process.cwd(), 'dist', 'cli.js');
    expect(existsSync(cli), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
    const resumed = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [cli, 'job', 'continue', id, '--db', scratch.url, '--workspace', workspace, '--json'],
        { env: { ...process.env, ...env() } },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = JSON.parse(resumed.stdout) as JobJson;
    expect(done.stop).toEqual({ kind: 'completed', summary: 'Archived the cancelled orders among ids 1-10.' });
    expect(done.execution).toMatchObject({ ticketId: ticket, rows: 4 });
    expect(done.todos).toEqual([expect.objectContaining({ id: 't1', status: 'done' })]);
    expect(server.requests.some((r) => r.text.includes('Executed after approval by teammate'))).toBe(true);
    // Retention for a real CLI job (the CLI passes its checkpointer in): a finished job keeps its three stops
    // (two plan reviews, one held write) and its newest checkpoint, nothing else.
    const checkpoints = join(workspace, '.pgagent', 'checkpoints', id);
    const kept = readdirSync(checkpoints).filter((f) => f.endsWith('.json') && !f.endsWith('.writes.json'));
    const writesOf = (f: string) => join(checkpoints, f.replace(/\.json$/, '.writes.json'));
    const stops = kept.filter(
      (f) => existsSync(writesOf(f)) && readFileSync(writesOf(f), 'utf8').includes('"__interrupt__"'),
    );
    expect(stops, 'stops kept').toHaveLength(3);
    expect(kept, 'checkpoints kept').toHaveLength(4);

    // Changed exactly once: two orders archived, two audit rows from the trigger; a second continue runs nothing.
    const archivedOnce = async () => {
      expect(Number(await queryValue(scratch.url, "SELECT count(*) FROM orders WHERE status = 'archived'"))).toBe(2);
      expect(
        Number(
          await queryValue(
            scratch.url,
            "SELECT count(*) FROM audit_log WHERE table_name = 'orders' AND operation = 'UPDATE'",
          ),
        ),
      ).toBe(2);
    };
    await archivedOnce();
    const again = await job(['continue', id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('completed; it cannot continue');
    const approveDone = await job(['approve', id, '--json']);
    expect(approveDone.code).toBe(2);
    expect(JSON.parse(approveDone.stdout)).toMatchObject({ status: 'invalid', error: { code: 'BAD_INPUT' } });
    await archivedOnce();
  });

  it('asks on a terminal for a held write and runs the job to completion once the person says y (--no-review)', async () => {
    const rename = "UPDATE products SET name = 'Renamed by job' WHERE id = 4";
    server.script([
      ...planTurn('# Plan\n\n1. Rename product 4.\n', rename),
      inTactical({ functionCall: call('run_sql', { sql: rename, todo_id: 't1' }) }),
      inTactical({ functionCall: call('job_complete', { summary: 'Product 4 renamed.' }) }),
    ]);
    const run = await job(['new', '--no-review', '--', 'Rename product 4'], { answers: ['y'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.prompts).toEqual(['Approve and run? [y/N] ']);
    expect(run.stdout).toContain(rename);
    expect(run.stdout).toContain('Completed: Product 4 renamed.');
    expect(run.stdout).toMatch(/Executed \(ticket [^)]+\): 1 row\(s\) changed/);
    expect(await queryValue(scratch.url, 'SELECT name FROM products WHERE id = 4')).toBe('Renamed by job');
  });

  it('continue on a terminal asks about a held write; "n" rejects it, nothing runs and the model is told', async () => {
    const fingerprint = await queryValue(scratch.url, SHOP_FINGERPRINT);
    const id = await jobAtReview();
    server.script([inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) })]);
    const held = await job(['approve', id, '--json']);
    expect(held.code, held.stderr).toBe(3);
    const ticket = (JSON.parse(held.stdout) as JobJson).ticket?.id ?? '';

    server.script([inTactical({ functionCall: call('job_complete', { summary: 'Left the orders as they are.' }) })]);
    const decided = await job(['continue', id], { answers: ['n'] });
    expect(decided.code, decided.stderr).toBe(0);
    expect(decided.prompts).toEqual(['Approve and run? [y/N] ']);
    expect(decided.stdout).toContain(ARCHIVE);
    expect(decided.stdout).toContain('Completed: Left the orders as they are.');
    expect(server.requests.at(-1)?.text).toContain('The write did not run.');
    const shownTicket = await runPgAgent(['approvals', 'show', ticket, '--json', '--workspace', workspace], {
      cwd: workspace,
    });
    const decidedTicket = JSON.parse(shownTicket.stdout) as {
      status: string;
      history: { action: string; by: string }[];
    };
    expect(decidedTicket.status).toBe('REJECTED');
    expect(decidedTicket.history.filter((h) => h.action === 'rejected').map((h) => h.by)).toEqual(['tester']);
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
  });

  it('chat streams the reply, lists the tools it used, prints drafted feedback with the revise command and a proposed plan edit', async () => {
    const id = await jobAtReview();
    const draft = "Don't archive in one statement: use batches of ten ids.";
    server.script([
      { match: reviewChat, reply: { functionCall: call('read_workspace_file', { path: 'plan.md' }) } },
      {
        match: reviewChat,
        reply: {
          functionCalls: [
            call('draft_feedback', { text: draft }),
            call('propose_plan_edit', {
              new_plan: '# Plan\n\n1. Archive in batches of ten ids.\n',
              summary: 'batches of ten',
            }),
          ],
        },
      },
      {
        match: reviewChat,
        reply: { text: 'The plan archives everything at once; I drafted feedback asking for batches.' },
      },
    ]);
    const writes: string[] = [];
    let stderr = '';
    const code = await runCli(
      ['job', '--db', scratch.url, '--workspace', workspace, 'chat', id, '--', 'Is one statement safe here?'],
      {
        stdout: (text) => writes.push(text),
        stderr: (text) => {
          stderr += text;
        },
        readStdin: () => Promise.resolve(''),
        isTTY: false,
        env: env(),
        cwd: workspace,
      },
    );
    const chat = { code, stdout: writes.join(''), stderr };
    expect(chat.code, chat.stderr).toBe(0);
    // Streamed: the reply reached stdout in several writes as the model sent it, before the summary lines.
    const reply = 'The plan archives everything at once; I drafted feedback asking for batches.';
    expect(chat.stdout.startsWith(reply)).toBe(true);
    const replyWrites = writes.findIndex((_, i) => writes.slice(0, i + 1).join('') === reply) + 1;
    expect(replyWrites).toBeGreaterThan(1);
    expect(chat.stdout).toContain('Tools used:');
    expect(chat.stdout).toContain(
      `pg-agent job revise ${id} --feedback 'Don'\\''t archive in one statement: use batches of ten ids.'`,
    );
    expect(chat.stdout).toContain('Proposed edit of plan.md');
    expect(chat.stdout).toContain('+1. Archive in batches of ten ids.');
    expect(server.requests.at(-1)?.stream).toBe(true);
    expect(server.requests.at(-1)?.text).toContain('Is one statement safe here?');
    expect(read(id, 'plan.md')).toBe(PLAN_V1); // a proposal only: the person applies it

    server.script([{ match: reviewChat, reply: { text: 'Yes: five calls so far.' } }]);
    const asJson = await job(['chat', id, '--json', '--', '-'], { stdin: 'How many model calls so far?\n' });
    expect(asJson.code, asJson.stderr).toBe(0);
    const turn = JSON.parse(asJson.stdout) as {
      reply: string;
      tools: unknown[];
      draftFeedback: string | null;
      planEdit: unknown;
      usage: { calls: number };
    };
    expect(Object.keys(turn).sort()).toEqual(['draftFeedback', 'planEdit', 'reply', 'tools', 'usage']);
    expect(turn).toMatchObject({
      reply: 'Yes: five calls so far.',
      tools: [],
      draftFeedback: null,
      planEdit: null,
      usage: { calls: 1 },
    });
    expect(server.requests.at(-1)?.text).toContain('How many model calls so far?');
    expect(server.requests.at(-1)?.text).toContain('Is one statement safe here?'); // the earlier turn is history
    expect((await job(['chat', id, '--', '  '])).code).toBe(2);

    // The proposed edit is applied from the terminal by its id, once; a second apply is refused.
    const editId = /Proposed edit of plan.md \((edit_[0-9a-f]+)\)/.exec(chat.stdout)?.[1] ?? '';
    expect(chat.stdout).toContain(`pg-agent job apply-edit ${id} ${editId}`);
    const applied = await job(['apply-edit', id, editId]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(read(id, 'plan.md')).toBe('# Plan\n\n1. Archive in batches of ten ids.\n');
    expect((await job(['apply-edit', id, editId])).code).toBe(2);
    expect((await job(['discard-edit', id])).code).toBe(2);
  });

  it("chat on the job's own database offers the DBA read tools (issue 26) and runs them there", async () => {
    const id = await jobAtReview();
    server.script([
      { match: reviewChat, reply: { functionCall: call('db_health', { checks: ['missing_fk_indexes'] }) } },
      { match: reviewChat, reply: { text: 'Checked.' } },
    ]);
    const chat = await job(['chat', id, '--json', '--', 'Is an index missing?']);
    expect(chat.code, chat.stderr).toBe(0);
    const asked = server.requests.filter(reviewChat);
    expect(asked.at(-2)?.text).toContain('advise_indexes');
    expect(asked.at(-1)?.text).toContain('Health checks.');
    expect(asked.at(-1)?.text).toContain('missing_fk_indexes');
  });

  it('cancels a job held at a write: its ticket is rejected, nothing runs, and it cannot be cancelled twice', async () => {
    const fingerprint = await queryValue(scratch.url, SHOP_FINGERPRINT);
    const id = await jobAtReview();
    server.script([
      inTactical({ functionCall: call('run_sql', { sql: ARCHIVE.replace('<= 10', '<= 50'), todo_id: 't1' }) }),
    ]);
    const held = await job(['approve', id, '--json']); // not a terminal: no prompt
    expect(held.code, held.stderr).toBe(3);
    const ticket = (JSON.parse(held.stdout) as JobJson).ticket?.id ?? '';

    const cancelled = await job(['cancel', id, '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({
      job: { id, status: 'cancelled' },
      stop: { kind: 'cancelled' },
    });
    const shownTicket = await runPgAgent(['approvals', 'show', ticket, '--json', '--workspace', workspace], {
      cwd: workspace,
    });
    expect(JSON.parse(shownTicket.stdout)).toMatchObject({ status: 'REJECTED' });
    expect((await job(['cancel', id])).code).toBe(2);
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
  });

  it('exits 1 with advice when the model fails mid-planning, and continue goes on from there', async () => {
    server.script([inStrategic({ error: { status: 400, message: 'the scripted model refuses' } })]);
    const broken = await job(['new', '--', 'Archive cancelled orders']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('the scripted model refuses');
    const id = JOB_ID.exec(broken.stdout)?.[0] ?? '';
    expect(broken.stdout).toContain(`pg-agent job continue ${id}`);

    // Paused while it waits (status frozen): a run in another process would stop at its next step.
    const paused = await job(['pause', id, '--json']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ job: { id, status: 'frozen' }, stop: { kind: 'frozen' } });
    const shown = await job(['show', id]);
    expect(shown.stdout).toContain(`Paused. Go on with: pg-agent job continue ${id}`);
    const twice = await job(['pause', id]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('only a job that is planning or running can be paused');

    server.script(planTurn(PLAN_V1));
    const resumed = await job(['continue', id, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      job: { status: 'pending_review' },
      stop: { kind: 'review', cycle: 1 },
      plan: PLAN_V1,
    });
  });

  it('refuses bad input with exit 2 and explains a missing model', async () => {
    const id = await jobAtReview();
    const expectBad = async (argv: string[], message: RegExp, options: { stdin?: string } = {}) => {
      const run = await job(argv, options);
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(message);
    };
    await expectBad(['show', 'job_123'], /is not a job id/);
    await expectBad(['show', '../../etc'], /is not a job id/);
    await expectBad(['show', 'job_0000000000000000'], /no job job_0000000000000000/);
    await expectBad(['revise', id, '--feedback', '   '], /feedback is empty/);
    await expectBad(['revise', id, '--feedback', '-'], /feedback is empty/, { stdin: '\n' });
    await expectBad(['revise', id], /needs --feedback/);
    await expectBad(['new', '--', '  '], /task is empty/);
    await expectBad(['frobnicate'], /Unknown job subcommand/);
    await expectBad(['continue', id, 'extra'], /Unexpected arguments/);
    await expectBad(['pause', id], /only a job that is planning or running can be paused/);
    await expectBad(['list', '--status', 'sleeping'], /Unknown job status/);
    await expectBad(['show', id, '--nope'], /unknown flag --nope/);
    // Another database than the job's: its tickets and plan are bound to the one it was planned on.
    const other = await runPgAgent(
      ['job', 'approve', id, '--db', 'postgres://someone@127.0.0.1:1/elsewhere', '--workspace', workspace],
      { cwd: workspace, env: env() },
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`Job ${id} works on`);
    expect(server.requests).toHaveLength(2); // none of these reached the model

    const noModel = await job(['new', '--', 'Archive cancelled orders'], { env: { USER: 'tester' } });
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toContain('GEMINI_API_KEY');
    expect(noModel.stderr).toContain('OPENAI_BASE_URL');
    const noModelJson = await job(['approve', id, '--json'], { env: { USER: 'tester' } });
    expect(noModelJson.code).toBe(1);
    expect(JSON.parse(noModelJson.stdout)).toMatchObject({ status: 'error', error: { code: 'CONFIG_INVALID' } });
    // Reading where a job stands needs no model.
    expect((await job(['show', id], { env: { USER: 'tester' } })).code).toBe(0);
  });
});
