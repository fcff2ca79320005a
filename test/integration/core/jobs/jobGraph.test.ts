// The phases graph of a job on real PostgreSQL with the scripted Gemini server: plan → review → revise
// with feedback → review → approve → tactical read and held write → approve → complete, with a fresh
// runner (new graph, new checkpointer, state only from files) at every stop, as a new process would.
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { readJobDetail } from '../../../../src/core/jobs/jobDetail';
import { log } from '../../../../src/core/jobs/jobHistory';
import type { JobEvent } from '../../../../src/core/jobs/jobOutcome';
import type { JobRunnerDeps } from '../../../../src/core/jobs/jobRunner';
import type { JobRunner } from '../../../../src/core/jobs/jobRunner';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import type { JobGraphDeps } from '../../../../src/core/jobs/phases/jobGraphDeps';
import { ensureStatus, JobHaltedError } from '../../../../src/core/jobs/phases/jobStatusSync';
import { silentLogger } from '../../../../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import {
  ARCHIVE,
  call,
  FEEDBACK,
  inStrategic,
  inTactical,
  PLAN_V1,
  PLAN_V2,
  planTurn,
  tactical,
} from '../../../support/jobScript';
import { queryValue } from '../../../support/scratchDatabase';
import { execSql, postgresAvailable } from '../../../support/services';
import {
  approveAndRunBehindTheJob,
  jobAtHeldWrite,
  scriptedJobRunner,
  useScriptedWorkspace,
  useShopDatabase,
} from '../../../support/shopDatabase';
import { SHOP_FINGERPRINT } from '../../../support/shopSchema';

describe.runIf(postgresAvailable)('job phases graph on PostgreSQL with a scripted model', () => {
  const shop = useShopDatabase();
  const rig = useScriptedWorkspace('pgagent-job-graph');
  let store: JobStore;
  beforeEach(() => {
    store = new JobStore(rig.workspace);
  });

  /** A fresh runner: new graph and checkpointer objects, nothing shared in memory with the previous one. */
  function runner(options: Partial<JobRunnerDeps> = {}): JobRunner {
    return scriptedJobRunner(shop, rig, options);
  }

  const read = (jobId: string, path: string) => readFileSync(join(store.jobDir(jobId), path), 'utf8');
  const archived = async () =>
    Number(await queryValue(shop.scratch.url, "SELECT count(*) FROM orders WHERE status = 'archived'"));

  it('plans, stops for review, revises with feedback, stops again, runs a read and a held write after approval, completes', async () => {
    const fingerprint = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    const events: JobEvent[] = [];
    rig.server.script([
      inStrategic({
        functionCalls: [call('list_tables'), call('count_rows', { table: 'orders', where: "status = 'cancelled'" })],
      }),
      ...planTurn(PLAN_V1),
    ]);
    const first = await runner({ onEvent: (e) => events.push(e) }).start({
      task: 'Archive cancelled orders\nKeep the customers.',
    });
    const jobId = first.job.id;
    expect(first.stop).toMatchObject({ kind: 'review', cycle: 1, maxReviewCycles: 5, overLimit: false });
    expect(first.job).toMatchObject({ status: 'pending_review', reviewCycles: 1, title: 'Archive cancelled orders' });
    // The count reached the model as untrusted data, and nothing was written while planning.
    const countAnswer = rig.server.requests[1]?.text ?? '';
    expect(countAnswer).toContain('<untrusted-data>');
    expect(countAnswer).toContain('40');
    expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    expect(read(jobId, 'plan.md')).toBe(PLAN_V1);
    expect(read(jobId, 'workspace.md')).toContain('40 cancelled orders');
    expect(read(jobId, 'tools/run_sql.md')).toContain('Phases:** tactical');
    expect(events).toContainEqual({ type: 'status', jobId, status: 'pending_review' });

    // The review waits on a plan ticket bound to this plan (job id + plan.md + todos.yaml).
    if (first.stop.kind !== 'review' || first.stop.ticketId === undefined)
      throw new Error('expected a review with a plan ticket');
    const planV1Ticket = await rig.tickets.get(first.stop.ticketId);
    expect(planV1Ticket).toMatchObject({
      kind: 'plan',
      status: 'PENDING_APPROVAL',
      plan: { jobId, cycle: 1 },
      sqlHash: first.stop.planHash,
    });
    expect(planV1Ticket?.sql).toContain(PLAN_V1);

    // Request changes: the plan ticket is rejected with the feedback, which goes to rig.workspace.md (dated) and the model.
    rig.server.script(planTurn(PLAN_V2));
    const second = await runner().requestChanges(jobId, FEEDBACK, { by: 'reviewer', seenHash: first.stop.planHash });
    expect(second.stop).toMatchObject({ kind: 'review', cycle: 2 });
    expect(await rig.tickets.get(first.stop.ticketId)).toMatchObject({
      status: 'REJECTED',
      decisions: [{ by: 'reviewer', approve: false, comment: FEEDBACK }],
    });
    if (second.stop.kind !== 'review' || second.stop.ticketId === undefined)
      throw new Error('expected a new plan ticket');
    expect(second.stop.ticketId).not.toBe(first.stop.ticketId);
    // A click made while looking at plan v1 cannot approve plan v2.
    await expect(runner().approvePlan(jobId, { by: 'reviewer', seenHash: first.stop.planHash })).rejects.toMatchObject({
      code: 'APPROVAL_STALE',
    });
    expect((await rig.tickets.get(second.stop.ticketId))?.status).toBe('PENDING_APPROVAL');
    const workspaceMd = read(jobId, 'workspace.md');
    expect(workspaceMd).toMatch(/## Review Feedback\n\n### \d{4}-\d\d-\d\dT[\d:.]+Z\n\nSplit the archive into batches/);
    const afterFeedback = rig.server.requests[4];
    expect(afterFeedback?.text).toContain(`Review feedback from reviewer (review cycle 1):\n${FEEDBACK}`);
    expect(afterFeedback?.text).toContain('## Review Feedback'); // rig.workspace.md in the system prompt
    const detail = await readJobDetail(store, second);
    expect(detail.planChange).toMatchObject({ fromCycle: 1, toCycle: 2 });
    expect(detail.planChange?.diff).toContain('-1. Archive all cancelled orders in one statement.');
    expect(detail.planChange?.diff).toContain('+1. Archive cancelled orders in batches of 10 ids.');
    expect(detail.usage.calls).toBe(5);

    // Approve: a read runs at once, the write is held with a ticket and nothing changes yet.
    rig.server.script([
      inTactical({
        functionCalls: [
          call('update_todo', { id: 't1', status: 'in_progress' }),
          call('run_sql', {
            sql: "SELECT count(*) AS n FROM orders WHERE status = 'cancelled' AND id <= 10",
            todo_id: 't1',
          }),
        ],
      }),
      inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) }),
    ]);
    const held = await runner().approvePlan(jobId, { by: 'reviewer', comment: 'go', seenHash: second.stop.planHash });
    expect(await rig.tickets.get(second.stop.ticketId)).toMatchObject({ kind: 'plan', status: 'EXECUTED' });
    expect(held.job.status).toBe('running');
    if (held.stop.kind !== 'approval') throw new Error(`expected an approval stop, got ${held.stop.kind}`);
    expect(held.stop).toMatchObject({ sql: ARCHIVE, todoId: 't1', sqlFile: 'sql/002-t1.sql' });
    expect(held.stop.impact.exactRows).toBe(4); // 2 orders updated + 2 audit rows from the trigger
    expect(read(jobId, 'sql/001-t1.sql')).toContain('SELECT count(*)');
    expect(read(jobId, held.stop.sqlFile)).toBe(`${ARCHIVE}\n`);
    expect(JSON.parse(read(jobId, 'impact/002.json'))).toMatchObject({ ticket: held.stop.ticketId, risk: 'LOW' });
    expect((await rig.tickets.get(held.stop.ticketId))?.status).toBe('PENDING_APPROVAL');
    expect(rig.server.requests[6]?.text).toContain('[\\"n\\"]\\n[\\"2\\"]'); // the read's rows went back to the model
    expect(await archived()).toBe(0);

    // Approve the write (a person's decision), then the tactical phase ends and a re-plan completes the job.
    rig.server.script([
      inTactical({
        functionCalls: [
          call('update_todo', { id: 't1', status: 'done' }),
          call('finish_phase', { summary: 'archived 2 orders' }),
        ],
      }),
      inStrategic({ functionCall: call('job_complete', { summary: 'Archived the cancelled orders among ids 1-10.' }) }),
    ]);
    const done = await runner().decideWrite(jobId, { approve: true, by: 'reviewer', comment: 'ok' });
    expect(done.stop).toEqual({ kind: 'completed', summary: 'Archived the cancelled orders among ids 1-10.' });
    expect(done.execution).toMatchObject({ ticketId: held.stop.ticketId, rows: 4, undoFile: 'undo/002.sql' });
    expect(await archived()).toBe(2);
    expect(read(jobId, 'undo/002.sql')).toContain('"id":5,"total":35,"status":"cancelled"');
    expect(read(jobId, 'todos.yaml')).toContain('status: done');
    expect(rig.server.requests[7]?.text).toContain('Executed after approval by reviewer: 4 row(s) changed');
    expect(rig.server.requests[8]?.text).toContain('Tactical phase 1 ended: archived 2 orders');

    const history = (await log(store.jobDir(jobId))).map((e) => e.message).reverse();
    expect(history).toEqual([
      'Review cycle 1: plan ready for review — archive cancelled orders',
      'Review cycle 1: changes requested by reviewer',
      'Review cycle 2: plan ready for review — archive cancelled orders',
      'Review cycle 2: plan approved by reviewer',
      'Todo t1 done: Archive the first cancelled orders',
      'Tactical phase 1: archived 2 orders',
      'Strategic phase 3: Archived the cancelled orders among ids 1-10.',
      'Job completed: Archived the cancelled orders among ids 1-10.',
    ]);
    const audit = read(jobId, 'audit.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; action?: string });
    expect(audit.filter((r) => r.type === 'model_call')).toHaveLength(9);
    expect(audit.filter((r) => r.type === 'review').map((r) => r.action)).toEqual(['revise', 'approve']);
    expect(audit.some((r) => r.type === 'approval')).toBe(true);

    // Retention: a finished job keeps its three stops (two reviews, one held write) and its newest checkpoint.
    const dir = join(rig.workspace, '.pgagent', 'checkpoints', jobId);
    const kept = readdirSync(dir)
      .filter((f) => f.endsWith('.json') && !f.endsWith('.writes.json'))
      .sort();
    const writesOf = (f: string) => join(dir, f.replace(/\.json$/, '.writes.json'));
    const stops = kept.filter(
      (f) => existsSync(writesOf(f)) && readFileSync(writesOf(f), 'utf8').includes('"__interrupt__"'),
    );
    expect(stops).toHaveLength(3);
    expect(kept).toHaveLength(4);
    expect(kept.slice(0, 3)).toEqual(stops);
    expect((await runner().outcome(jobId)).stop).toEqual(done.stop);
  });

  it('offers "run as is" past the review-cycle limit, and runs without a pause when not interactive', async () => {
    rig.server.script(planTurn(PLAN_V1));
    const limited = await runner({ planning: { maxReviewCycles: 1 } }).start({ task: 'Archive cancelled orders' });
    expect(limited.stop).toMatchObject({ kind: 'review', cycle: 1, maxReviewCycles: 1, overLimit: true });
    rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'nothing to do after all' }) })]);
    const asIs = await runner().skipReview(limited.job.id, { by: 'reviewer' });
    expect(asIs.stop.kind).toBe('completed');
    expect((await log(store.jobDir(asIs.job.id))).map((e) => e.message)).toContain(
      'Review cycle 1: review skipped by reviewer, run as is',
    );

    rig.server.script([
      ...planTurn(PLAN_V1),
      inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) }),
    ]);
    const direct = await runner({ planning: { interactive: false } }).start({ task: 'Archive cancelled orders' });
    expect(direct.stop.kind).toBe('approval');
    expect(direct.job.reviewCycles).toBe(0);
  });

  it('a plan ticket decided elsewhere moves the job on at continue; a plan edited in review gets a new ticket', async () => {
    rig.server.script(planTurn(PLAN_V1));
    const review = await runner().start({ task: 'Archive cancelled orders' });
    if (review.stop.kind !== 'review' || review.stop.ticketId === undefined) throw new Error('expected a plan ticket');
    // A plan edit during the review (the review chat's apply-edit): the old ticket approves a plan that is gone.
    await store.writeFile(review.job.id, 'plan.md', PLAN_V2);
    const edited = await runner().outcome(review.job.id);
    if (edited.stop.kind !== 'review') throw new Error('expected the review');
    expect(edited.stop.planHash).not.toBe(review.stop.planHash);
    await expect(
      runner().approvePlan(review.job.id, { by: 'reviewer', seenHash: review.stop.planHash }),
    ).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    const superseded = await rig.tickets.get(review.stop.ticketId);
    expect(superseded).toMatchObject({
      status: 'REJECTED',
      decisions: [{ by: 'pg-agent', comment: expect.stringContaining('superseded') as unknown }],
    });
    const current = await runner().outcome(review.job.id);
    if (current.stop.kind !== 'review' || current.stop.ticketId === undefined)
      throw new Error('expected a new plan ticket');
    expect(current.stop.ticketId).not.toBe(review.stop.ticketId);
    expect((await rig.tickets.get(current.stop.ticketId))?.sql).toContain(PLAN_V2);
    // A teammate decides it with their own store (another process, another machine); continue goes on from it.
    const teammate = new FileTicketStore(join(rig.workspace, '.pgagent', 'approvals'), { logger: silentLogger });
    await teammate.decide(current.stop.ticketId, { approve: true, by: 'teammate', seenHash: current.stop.planHash });
    rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'done' }) })]);
    const done = await runner().continue(review.job.id);
    expect(done.stop.kind).toBe('completed');
    expect((await rig.tickets.get(current.stop.ticketId))?.status).toBe('EXECUTED');
  });

  it('a team policy holds the plan and the write at their stops until a second person approves', async () => {
    const team = {
      settings: { ...DEFAULT_SAFETY, approvalRules: { approvers: [], policy: { twoPersonAbove: 'none' as const } } },
    };
    rig.server.script(planTurn(PLAN_V1));
    const review = await runner(team).start({ task: 'Archive cancelled orders' });
    if (review.stop.kind !== 'review' || review.stop.ticketId === undefined) throw new Error('expected a plan ticket');
    await expect(runner(team).approvePlan(review.job.id, { by: 'reviewer' })).rejects.toMatchObject({
      code: 'APPROVAL_POLICY',
      message: expect.stringContaining('a second approver') as unknown,
    });
    expect((await runner(team).outcome(review.job.id)).stop.kind).toBe('review');
    expect((await rig.tickets.get(review.stop.ticketId))?.status).toBe('APPROVED');
    await rig.tickets.decide(review.stop.ticketId, { approve: true, by: 'second' });
    rig.server.script([inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) })]);
    const held = await runner(team).continue(review.job.id);
    if (held.stop.kind !== 'approval') throw new Error(`expected a held write, got ${held.stop.kind}`);
    const before = await archived();
    await expect(runner(team).decideWrite(review.job.id, { approve: true, by: 'reviewer' })).rejects.toMatchObject({
      code: 'APPROVAL_POLICY',
    });
    expect((await runner(team).outcome(review.job.id)).stop.kind).toBe('approval');
    expect(await archived()).toBe(before);
    expect((await rig.tickets.get(held.stop.ticketId))?.status).toBe('APPROVED');
    await rig.tickets.decide(held.stop.ticketId, { approve: true, by: 'second' });
    rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'archived' }) })]);
    const done = await runner(team).continue(review.job.id);
    expect(done.stop.kind).toBe('completed');
    expect((await rig.tickets.get(held.stop.ticketId))?.status).toBe('EXECUTED');
  });

  it('a write its job already executed before dying is reported as executed on continue, and not run again', async () => {
    const { jobId, ticketId } = await jobAtHeldWrite(rig, runner);
    // The job's process approved and ran the write, then died before its graph recorded anything.
    const ran = await approveAndRunBehindTheJob(shop, rig, ticketId);
    const after = await archived();
    rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'archived' }) })]);
    const done = await runner().continue(jobId);
    expect(done.stop.kind).toBe('completed');
    const told = rig.server.requests.filter(tactical).at(-1)?.text ?? '';
    expect(told).toContain(`Executed earlier (ticket ${ticketId}, transaction ${ran.ticket.execution?.xid ?? '?'})`);
    expect(told).not.toContain('Rejected');
    expect(await archived()).toBe(after);
  });

  it('a job paused at its held write stays paused when a teammate approves it: the write runs only after Continue', async () => {
    const fingerprint = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    const { jobId, ticketId } = await jobAtHeldWrite(rig, runner);
    expect((await runner().freeze(jobId)).stop).toEqual({ kind: 'frozen' });
    // A teammate's approval arrives (the window or pg-agent job continue would resume from the ticket).
    await rig.tickets.decide(ticketId, { approve: true, by: 'teammate' });
    const stillPaused = await runner().resumeFromTicket(jobId);
    expect(stillPaused.job.status).toBe('frozen');
    expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    expect((await rig.tickets.get(ticketId))?.status).toBe('APPROVED');
    rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'archived' }) })]);
    const done = await runner().continue(jobId);
    expect(done.stop.kind).toBe('completed');
    expect((await rig.tickets.get(ticketId))?.status).toBe('EXECUTED');
  });

  it('no step un-pauses a job: moving a paused job to another status halts the step instead (only Continue thaws it)', async () => {
    const job = await runner().create({ task: 'Archive cancelled orders' });
    await store.setStatus(job.id, 'running', 'test: a tactical phase');
    await runner().freeze(job.id);
    const deps = { store, emit: () => undefined } as unknown as JobGraphDeps;
    await expect(ensureStatus(deps, job.id, 'running', 'waiting for a write approval')).rejects.toBeInstanceOf(
      JobHaltedError,
    );
    expect((await store.get(job.id)).status).toBe('frozen');
  });

  it("a driver killed after its write's ticket was made: the job picks that ticket up again instead of making a second one", async () => {
    const { jobId, ticketId: first } = await jobAtHeldWrite(rig, runner);
    const dir = join(rig.workspace, '.pgagent', 'checkpoints', jobId);
    const ids = () =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.json') && !f.endsWith('.writes.json'))
        .map((f) => f.replace(/\.json$/, ''))
        .sort();
    /** What a kill -9 leaves: the ticket and impact file exist, the graph's checkpoints from `from` on were never written. */
    const loseCheckpointsFrom = (from: string) => {
      for (const id of ids().filter((i) => i >= from))
        for (const suffix of ['.json', '.writes.json']) rmSync(join(dir, `${id}${suffix}`), { force: true });
    };
    const liveTickets = async () =>
      (await rig.tickets.list()).filter((t) => t.status === 'PENDING_APPROVAL' && t.kind === 'write').map((t) => t.id);
    const writeHeld = ids().at(-1) ?? '';

    // Killed before the held write was recorded: the tool call runs again and finds its ticket.
    loseCheckpointsFrom(writeHeld);
    const again = await runner().continue(jobId);
    expect(again.stop).toMatchObject({ kind: 'approval', ticketId: first });
    expect(await liveTickets()).toEqual([first]);

    // Killed before even the model's answer was recorded: the model proposes other SQL for the same todo,
    // and the first ticket is voided, visibly, before the new one is made.
    const decoded = (id: string) =>
      Buffer.from(
        (JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')) as { checkpoint: { data: string } }).checkpoint.data,
        'base64',
      ).toString('utf8');
    // The first checkpoint holding the model's run_sql answer, and the answer's pending write on the one before.
    const answered = ids().findIndex((id) => decoded(id).includes('"name":"run_sql"'));
    loseCheckpointsFrom(ids()[answered] ?? '');
    rmSync(join(dir, `${ids()[answered - 1] ?? ''}.writes.json`), { force: true });
    const other = ARCHIVE.replace('10', '5');
    rig.server.script([inTactical({ functionCall: call('run_sql', { sql: other, todo_id: 't1' }) })]);
    const anew = await runner().continue(jobId);
    if (anew.stop.kind !== 'approval') throw new Error(`expected a held write, got ${anew.stop.kind}`);
    expect(anew.stop.sql).toBe(other);
    expect(await liveTickets()).toEqual([anew.stop.ticketId]);
    const voided = await rig.tickets.get(first);
    expect(voided?.status).toBe('REJECTED');
    expect(voided?.history.at(-1)?.comment).toContain('superseded');
    expect(read(jobId, 'audit.jsonl')).toContain(`ticket ${first} voided`);
  });

  it('the executing backend terminated mid-write (pg_terminate_backend): nothing committed, the ticket FAILED with no undo to apply, the model told, the job goes on', async () => {
    const fingerprint = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    const { jobId, ticketId } = await jobAtHeldWrite(rig, runner);
    // The write is slow from now on (the test's own database): long enough to kill its backend while it runs.
    await execSql(
      shop.scratch.url,
      `CREATE FUNCTION test_slow_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$;
      CREATE TRIGGER test_slow_update AFTER UPDATE ON orders FOR EACH STATEMENT EXECUTE FUNCTION test_slow_update();`,
    );
    try {
      rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'stopped: the write failed' }) })]);
      const deciding = runner().decideWrite(jobId, { approve: true, by: 'reviewer' });
      const killed = async () =>
        Number(
          await queryValue(
            shop.scratch.url,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep' AND query LIKE 'UPDATE orders SET status%'",
          ),
        );
      await expect.poll(killed, { timeout: 20_000, interval: 100 }).toBe(1);
      const after = await deciding;
      expect(after.stop.kind).toBe('completed');
      const told = rig.server.requests.filter(tactical).at(-1)?.text ?? '';
      expect(told).toContain('the approved write failed and nothing was committed');
      const ticket = await rig.tickets.get(ticketId);
      expect(ticket?.status).toBe('FAILED');
      // Killed during the statement: no undo script was written (it is written just before COMMIT), or it says VOID.
      const undoDir = join(store.jobDir(jobId), 'undo');
      for (const file of existsSync(undoDir) ? readdirSync(undoDir) : [])
        expect(readFileSync(join(undoDir, file), 'utf8')).toContain('VOID');
      expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
      // Nothing runs it again: the ticket is spent.
      await expect(
        executeApproved(shop.db, rig.tickets, ticketId, {
          ...DEFAULT_SAFETY,
          connection: shop.scratch.url,
          by: 'x',
          undo: workspaceUndoSink(join(rig.workspace, 'undo'), 'x'),
          logger: silentLogger,
        }),
      ).rejects.toThrow();
    } finally {
      await execSql(shop.scratch.url, 'DROP TRIGGER test_slow_update ON orders; DROP FUNCTION test_slow_update()');
    }
  });

  it('a rejected write does not run and the model is told; cancelling a held job rejects its ticket', async () => {
    const fingerprint = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    const { jobId, ticketId } = await jobAtHeldWrite(rig, runner);
    rig.server.script([
      inTactical({ functionCall: call('run_sql', { sql: ARCHIVE.replace('10', '5'), todo_id: 't1' }) }),
    ]);
    const again = await runner().decideWrite(jobId, { approve: false, by: 'reviewer', comment: 'too many' });
    expect(rig.server.requests.at(-1)?.text).toContain('Rejected by reviewer: too many. The write did not run.');
    expect((await rig.tickets.get(ticketId))?.status).toBe('REJECTED');
    if (again.stop.kind !== 'approval') throw new Error('expected the second write to be held');
    const cancelled = await runner().cancel(jobId, 'reviewer');
    expect(cancelled.stop).toEqual({ kind: 'cancelled' });
    expect((await rig.tickets.get(again.stop.ticketId))?.status).toBe('REJECTED');
    expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    await expect(runner().continue(jobId)).rejects.toThrow(/cancelled; it cannot continue/);
  });

  it('a read tool refuses a write while planning, and a model failure leaves the job where it was until Continue', async () => {
    const fingerprint = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    rig.server.script([
      inStrategic({ functionCall: call('run_read_sql', { sql: 'DELETE FROM order_items' }) }),
      inStrategic({ error: { status: 500, message: 'backend exploded' } }),
    ]);
    const broken = await runner().start({ task: 'Clean up order items' });
    expect(broken.stop.kind).toBe('interrupted');
    if (broken.stop.kind === 'interrupted') expect(broken.stop.error?.message).toMatch(/backend exploded|500/);
    expect(broken.job.status).toBe('planning');
    expect(rig.server.requests[1]?.text).toContain('Not run: this is not a read');
    expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);

    rig.server.script(planTurn(PLAN_V1));
    const resumed = await runner().continue(broken.job.id);
    expect(resumed.stop).toMatchObject({ kind: 'review', cycle: 1 });
    // The retried call was the one that failed: the refusal is still in the conversation, once.
    expect(rig.server.requests[2]?.text.split('Not run: this is not a read')).toHaveLength(2);
  });

  it('the model timing out, then answering garbage, mid-tactical-phase: each time the job stays where it was, says why, holds nothing; Continue completes it', async () => {
    rig.server.script(planTurn(PLAN_V1));
    const review = await runner().start({ task: 'Archive cancelled orders' });
    const jobId = review.job.id;
    const fingerprint = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    const impatient = () => runner({ modelTimeoutMs: 300 });

    // The first tactical call answers after the runner gave up on it.
    rig.server.script([
      inTactical({ delayMs: 5_000, then: { functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) } }),
    ]);
    const timedOut = await impatient().approvePlan(jobId, { by: 'reviewer' });
    expect(timedOut.stop.kind).toBe('interrupted');
    if (timedOut.stop.kind === 'interrupted') expect(timedOut.stop.error?.message).toMatch(/time|300 ms/i);
    expect(timedOut.job.status).toBe('running');

    // The next answer is not JSON at all.
    rig.server.script([inTactical({ raw: '<html>502 Bad Gateway</html>' })]);
    const garbage = await impatient().continue(jobId);
    expect(garbage.stop.kind).toBe('interrupted');
    if (garbage.stop.kind === 'interrupted')
      expect(garbage.stop.error?.message).toMatch(
        /returned output that does not match what was asked for: its answer is not JSON/,
      );
    expect(garbage.job.status).toBe('running');

    // Nothing was proposed or changed meanwhile, and the model is asked the same question again.
    expect((await rig.tickets.list()).filter((t) => t.kind === 'write')).toEqual([]);
    expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    const tacticalAsks = rig.server.requests.filter(tactical);
    expect(tacticalAsks.at(-1)?.text).toBe(tacticalAsks.at(-2)?.text);

    rig.server.script([
      inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) }),
      inTactical({
        functionCalls: [
          call('update_todo', { id: 't1', status: 'done' }),
          call('finish_phase', { summary: 'archived 2 orders' }),
        ],
      }),
      inStrategic({ functionCall: call('job_complete', { summary: 'done' }) }),
    ]);
    const held = await runner().continue(jobId);
    if (held.stop.kind !== 'approval') throw new Error(`expected a held write, got ${held.stop.kind}`);
    const done = await runner().decideWrite(jobId, { approve: true, by: 'reviewer' });
    expect(done.stop.kind).toBe('completed');
    expect(await archived()).toBe(2);
  });

  it('a pause from another runner stops the job at its next step; Continue thaws it and goes on', async () => {
    rig.server.script([
      inStrategic({ delayMs: 300, then: { functionCall: call('list_tables') } }),
      ...planTurn(PLAN_V1),
    ]);
    const job = await runner().create({ task: 'Archive cancelled orders' });
    const running = runner().continue(job.id);
    while (rig.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const paused = await runner().freeze(job.id);
    expect(paused.stop).toEqual({ kind: 'frozen' });
    const stopped = await running;
    expect(stopped.stop).toEqual({ kind: 'frozen' });
    expect(rig.server.requests).toHaveLength(1); // the call in flight finished; no further model call was made
    const toolCalls = () =>
      readFileSync(join(store.jobDir(job.id), 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; name?: string })
        .filter((r) => r.type === 'tool_call');
    expect(toolCalls()).toEqual([]); // nor did the tool call of the answer that arrived after the pause
    const resumed = await runner().continue(job.id);
    expect(resumed.stop).toMatchObject({ kind: 'review', cycle: 1 });
    expect(resumed.job.status).toBe('pending_review');
  });

  it('refuses actions a job is not at, and bad arguments from the model come back as tool errors', async () => {
    rig.server.script([
      inStrategic({ functionCall: call('write_todos', { todos: [{ id: 't1', title: 'a', depends_on: ['t9'] }] }) }),
      inStrategic({ functionCall: call('describe_table', { table: 'nope' }) }),
      ...planTurn(PLAN_V1),
    ]);
    const review = await runner().start({ task: 'Archive cancelled orders' });
    expect(rig.server.requests[1]?.text).toContain('depends on unknown todo');
    expect(rig.server.requests[2]?.text).toContain('There is no table \\"nope\\"');
    await expect(runner().decideWrite(review.job.id, { approve: true, by: 'x' })).rejects.toThrow(
      /not at a write waiting for approval/,
    );
    await expect(runner().requestChanges(review.job.id, '  ', { by: 'x' })).rejects.toThrow(/feedback is empty/);
    expect(existsSync(join(store.jobDir(review.job.id), '.history'))).toBe(true);
  });
});
