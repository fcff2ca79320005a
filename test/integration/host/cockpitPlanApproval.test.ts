// One cockpit plan approval, counted with instrumented stores (issue 23): the same host code the cockpit runs
// (JobRunners, the window's runner; JobSteps; planDecisions.decidePlanHere; jobEntries.readJobEntry, the
// refresh after the step; JobPlanWatch; jobSettings.jobRunnerSettings, the VS Code settings of a step), driven
// in node on real PostgreSQL, real files and the scripted model server. Only VS Code's API is a stand-in (no
// user or workspace settings, a trusted workspace). Counted: reads of the plan ticket through the ticket store
// (and every read of its file), hashes of the plan, reads of .pgagent/config.json and of the person's own config.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type * as FsModule from 'node:fs';
import type * as FsPromisesModule from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as PlanTicketModule from '../../../src/core/approvals/planTicket';
import type * as PolicyInForceModule from '../../../src/core/approvals/policyInForce';
import { scriptedGemini } from '../../support/scriptedGemini';

const counted = vi.hoisted(() => ({ files: [] as string[] }));

vi.mock('vscode', () => ({
  Uri: { file: (path: string) => ({ fsPath: path }) },
  workspace: { isTrusted: true, getConfiguration: () => ({ get: () => undefined, inspect: () => undefined }) },
  window: { showWarningMessage: () => Promise.resolve(undefined) },
}));
// Every file read of src/ (the job store reads synchronously, the ticket store and config reader asynchronously).
vi.mock('node:fs', async (importOriginal) => {
  const { countingReads } = await import('../../support/countedReads');
  return countingReads(await importOriginal<typeof FsModule>(), 'readFileSync', counted.files);
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const { countingReads } = await import('../../support/countedReads');
  return countingReads(await importOriginal<typeof FsPromisesModule>(), 'readFile', counted.files);
});
vi.mock('../../../src/core/approvals/planTicket', async (importOriginal) => {
  const real = await importOriginal<typeof PlanTicketModule>();
  return { ...real, planHash: vi.fn(real.planHash) };
});
vi.mock('../../../src/core/approvals/policyInForce', async (importOriginal) => {
  const real = await importOriginal<typeof PolicyInForceModule>();
  return { ...real, authorizeAtClaim: vi.fn(real.authorizeAtClaim) };
});
// The loader's job is to load dist/services.js on first use; here the same module from source.
vi.mock('../../../src/host/lazyServices', async () => {
  const services = await import('../../../src/host/services');
  return { coreOnFirstUse: () => () => services };
});

import { FileTicketStore } from '../../../src/core/approvals/fileTicketStore';
import { planHash } from '../../../src/core/approvals/planTicket';
import { authorizeAtClaim } from '../../../src/core/approvals/policyInForce';
import type { Ticket } from '../../../src/core/approvals/ticket';
import type { TicketStore } from '../../../src/core/approvals/ticketStore';
import type { JobOutcome } from '../../../src/core/jobs/jobOutcome';
import { JobStore } from '../../../src/core/jobs/jobStore';
import { silentLogger } from '../../../src/core/platform/logger';
import { IDLE } from '../../../src/host/jobs/cockpit/jobView';
import type { JobEntry } from '../../../src/host/jobs/jobEntries';
import { readJobEntry } from '../../../src/host/jobs/jobEntries';
import { JobHeldWrites } from '../../../src/host/jobs/jobHeldWrites';
import { JobPlanWatch } from '../../../src/host/jobs/jobPlanWatch';
import { JobRunners } from '../../../src/host/jobs/jobRunners';
import { jobRunnerSettings } from '../../../src/host/jobs/jobSettings';
import { JobSteps } from '../../../src/host/jobs/jobSteps';
import { decidePlanHere, resumeDecidedElsewhere } from '../../../src/host/jobs/planDecisions';
import { coreOnFirstUse } from '../../../src/host/lazyServices';
import { jobsPort } from '../../../src/host/compose/jobsPort';
import { settingsPort } from '../../../src/host/compose/settingsPort';
import type { HeldWrite } from '../../../src/host/sqlApproval/approvalEntries';
import type { InlineApproval } from '../../../src/host/sqlApproval/inlineApproval';
import type { WindowTickets } from '../../../src/host/sqlApproval/windowTickets';
import { ARCHIVE, call, inTactical, PLAN_V1, planTurn } from '../../support/jobScript';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../support/scriptedModelServer';
import { queryValue } from '../../support/scratchDatabase';
import { postgresAvailable } from '../../support/services';
import { useShopDatabase } from '../../support/shopDatabase';

/** The window's core loader (mocked above: the services module from source). */
const coreServices = coreOnFirstUse();
/** The jobs' port over it, as extension.ts builds it (no model: the steps get theirs from the test). */
const port = jobsPort(coreServices, { geminiKey: () => Promise.resolve(undefined), logger: silentLogger });

/** The window's ticket store, counting the reads (get, waitForDecision) of each ticket made through it, and its transitions. */
function countingStore(real: FileTicketStore): {
  store: TicketStore;
  reads: Map<string, number>;
  transitions: Map<string, number>;
} {
  const reads = new Map<string, number>();
  const transitions = new Map<string, number>();
  const bump = (map: Map<string, number>, id: unknown) => map.set(String(id), (map.get(String(id)) ?? 0) + 1);
  const store = new Proxy(real, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'get' || property === 'waitForDecision') bump(reads, args[0]);
        if (property === 'decide' || property === 'claim' || property === 'finish') bump(transitions, args[0]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as unknown as TicketStore;
  return { store, reads, transitions };
}

describe.runIf(postgresAvailable)('one cockpit plan approval, counted with instrumented stores', () => {
  const shop = useShopDatabase();
  let server: ScriptedModelServer;
  let workspace: string;
  let ownDir: string;
  let previousXdg: string | undefined;
  let tickets: FileTicketStore;

  beforeEach(async () => {
    server = await startScriptedModelServer();
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-cockpit-count-'));
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    writeFileSync(
      join(workspace, '.pgagent', 'config.json'),
      `${JSON.stringify({ connections: [], planning: { maxReviewCycles: 4 } })}\n`,
    );
    // The person's own config file, outside the workspace.
    ownDir = mkdtempSync(join(tmpdir(), 'pgagent-own-'));
    mkdirSync(join(ownDir, 'pg-agent'));
    writeFileSync(join(ownDir, 'pg-agent', 'config.json'), '{ "connections": [] }\n');
    previousXdg = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = ownDir;
    tickets = new FileTicketStore(join(workspace, '.pgagent', 'approvals'), { logger: silentLogger });
  });

  afterEach(async () => {
    if (previousXdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = previousXdg;
    await tickets.close();
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(ownDir, { recursive: true, force: true });
  });

  /** The window's job objects, wired as JobController wires them (VS Code's progress and model as ports). */
  function windowOf(store: TicketStore) {
    const provider = scriptedGemini(server);
    const entries = new Map<string, JobEntry>();
    const elsewhere: string[] = [];
    const runners = new JobRunners({
      port,
      rootDir: workspace,
      logger: silentLogger,
      session: {
        use: (work) => work({ db: shop.db, key: shop.scratch.url }),
        loadSnapshot: () => Promise.resolve(shop.snapshot),
      },
      ticketStore: () => Promise.resolve(store),
      settings: () => jobRunnerSettings(settingsPort(coreServices), workspace),
      driverName: () => 'test window',
    });
    // eslint-disable-next-line prefer-const -- the watch and the steps refer to each other, as in JobController
    let steps: JobSteps;
    const planWatch = new JobPlanWatch(
      () => Promise.resolve(store),
      silentLogger,
      async (jobId: string, ticket: Ticket) => {
        elsewhere.push(ticket.id);
        await resumeDecidedElsewhere({ steps, runners }, jobId, ticket);
      },
    );
    const entryDeps = {
      port,
      runners,
      ticketStore: () => Promise.resolve(store),
      held: { restore: () => Promise.resolve(false), card: () => null },
      planWatch,
      logger: silentLogger,
    };
    /** The board's refresh of an open cockpit: readJobEntry. */
    const refresh = async (jobId: string) => {
      entries.set(jobId, await readJobEntry(entryDeps, jobId, IDLE, true, entries.get(jobId)));
    };
    let current = '';
    steps = new JobSteps({
      runners,
      logger: silentLogger,
      ui: {
        progress: (_title, work) =>
          work(
            () => undefined,
            () => undefined,
          ),
        info: () => undefined,
      },
      model: () => Promise.resolve({ provider }),
      setLocal: () => undefined,
      filesChanged: () => undefined,
      ended: () => refresh(current),
    });
    /** What JobController.newJob does: create, then plan to the first stop. */
    const newJob = async (task: string): Promise<string> => {
      const job = await runners.withAction(
        undefined,
        { provider: undefined, signal: new AbortController().signal, onEvent: () => undefined },
        (runner) => runner.create({ task }),
      );
      current = job.id;
      await steps.run(job.id, 'plan', 'Planning…', (runner) => runner.continue(job.id), true);
      return job.id;
    };
    const approve = (jobId: string): Promise<JobOutcome | undefined> => {
      const stop = entries.get(jobId)?.view?.stop;
      if (stop?.kind !== 'review' || stop.ticketId === null || stop.planHash === null)
        throw new Error(`expected the cockpit at a review, got ${JSON.stringify(stop)}`);
      return decidePlanHere(
        { steps, planWatch, decider: () => Promise.resolve({ by: 'reviewer' }) },
        { kind: 'approvePlan', jobId, ticketId: stop.ticketId, seenHash: stop.planHash },
      );
    };
    return { runners, steps, planWatch, entries, elsewhere, newJob, approve, refresh };
  }

  const readsOf = (match: (path: string) => boolean) => counted.files.filter(match).length;
  const configFile = () => join(workspace, '.pgagent', 'config.json');
  const ownFile = () => join(ownDir, 'pg-agent', 'config.json');

  it('reads the plan ticket at most twice, hashes the plan once, reads the settings once and the claim policy once; the runner is built once', async () => {
    const { store, reads, transitions } = countingStore(tickets);
    const window = windowOf(store);
    server.script(planTurn(PLAN_V1));
    const jobId = await window.newJob('Archive cancelled orders');
    const atReview = window.entries.get(jobId);
    expect(atReview?.view?.stop).toMatchObject({ kind: 'review', cycle: 1, maxReviewCycles: 4 });
    const stop = atReview?.view?.stop;
    if (stop?.kind !== 'review' || stop.ticketId === null) throw new Error('expected a plan ticket');
    const ticketId = stop.ticketId;
    // The cockpit watches the plan ticket (decided elsewhere → resumed); wait until its first read is done.
    await expect.poll(() => reads.get(ticketId) ?? 0).toBeGreaterThan(0);
    await expect.poll(() => readsOf((p) => basename(p) === `${ticketId}.json`)).toBeGreaterThan(0);

    // The click: from here on everything is counted.
    reads.clear();
    transitions.clear();
    counted.files.length = 0;
    vi.mocked(planHash).mockClear();
    vi.mocked(authorizeAtClaim).mockClear();
    server.script([inTactical({ functionCall: call('job_complete', { summary: 'nothing to do after all' }) })]);
    const outcome = await window.approve(jobId);

    expect(outcome?.stop).toEqual({ kind: 'completed', summary: 'nothing to do after all' });
    const ticketReads = reads.get(ticketId) ?? 0;
    const ticketTransitions = transitions.get(ticketId) ?? 0;
    expect(ticketReads, 'reads of the plan ticket through the ticket store').toBeLessThanOrEqual(2);
    expect(ticketTransitions, 'decide, claim, finish').toBe(3);
    // Every read of the ticket's file is one of those (no reader behind the store's back, no stray watch).
    expect(readsOf((p) => basename(p) === `${ticketId}.json`)).toBe(ticketReads + ticketTransitions);
    expect(vi.mocked(planHash), 'plan hashes').toHaveBeenCalledTimes(1);
    // The step's settings read each config file once; the claim of the plan ticket (SPEC §5 3a), shared by the
    // runner's early refusal and the graph's claim, takes the policy in force from that read (and the database).
    expect(vi.mocked(authorizeAtClaim), 'policy in force read for the claim').toHaveBeenCalledTimes(1);
    expect(
      readsOf((p) => p === configFile()),
      '.pgagent/config.json reads: once, for the step',
    ).toBe(1);
    expect(
      readsOf((p) => p === ownFile()),
      'own config reads: once, for the step',
    ).toBe(1);
    expect(window.runners.buildCount(), 'the window runner was built once, for the first step').toBe(1);
    expect(window.elsewhere, 'a decision of this window is not resumed by the watch').toEqual([]);
    const measured = {
      ticketReads,
      planHashes: vi.mocked(planHash).mock.calls.length,
      configReads: readsOf((p) => p === configFile()),
      policyReads: vi.mocked(authorizeAtClaim).mock.calls.length,
      jobJsonReads: readsOf((p) => p.endsWith(join(jobId, 'job.json'))),
      planMdReads: readsOf((p) => p.endsWith(join(jobId, 'plan.md'))),
    };
    console.info(`cockpit plan approval, measured: ${JSON.stringify(measured)}`);
    // The files of record (read after counting): the plan ticket was decided, claimed and finished once; the job is done.
    expect(await tickets.get(ticketId)).toMatchObject({
      kind: 'plan',
      status: 'EXECUTED',
      decisions: [{ by: 'reviewer', approve: true }],
    });
    expect((await new JobStore(workspace).get(jobId)).status).toBe('completed');
    expect(window.entries.get(jobId)?.view?.status).toBe('completed');
    window.planWatch.dispose();
  });

  it('rebuilds the window runner only when a setting changes (read at each step, or at a settings change event), and the view follows', async () => {
    const window = windowOf(tickets);
    server.script(planTurn(PLAN_V1));
    const jobId = await window.newJob('Archive cancelled orders');
    expect(window.runners.buildCount()).toBe(1);
    // A step with the same settings: same runner.
    server.script(planTurn(PLAN_V1));
    await window.steps.run(jobId, 'continue', 'Continuing…', (runner) => runner.outcome(jobId), true);
    expect(window.runners.buildCount()).toBe(1);
    // The workspace tightens its planning settings: the next step builds a new runner, and the view shows them.
    writeFileSync(configFile(), `${JSON.stringify({ connections: [], planning: { maxReviewCycles: 2 } })}\n`);
    await window.steps.run(jobId, 'continue', 'Continuing…', (runner) => runner.outcome(jobId), true);
    expect(window.runners.buildCount()).toBe(2);
    expect(window.entries.get(jobId)?.view?.stop).toMatchObject({ kind: 'review', maxReviewCycles: 2 });
    // Reading where the job stands (the view's refresh) reads no settings…
    writeFileSync(configFile(), `${JSON.stringify({ connections: [], planning: { maxReviewCycles: 3 } })}\n`);
    counted.files.length = 0;
    await window.refresh(jobId);
    expect(readsOf((p) => p === configFile())).toBe(0);
    expect(window.entries.get(jobId)?.view?.stop).toMatchObject({ maxReviewCycles: 2 });
    // …until a settings change event (VS Code settings, the watcher of .pgagent/config.json) says they changed.
    window.runners.settingsChanged();
    await window.refresh(jobId);
    expect(readsOf((p) => p === configFile())).toBe(1);
    expect(window.runners.buildCount()).toBe(3);
    expect(window.entries.get(jobId)?.view?.stop).toMatchObject({ maxReviewCycles: 3 });
    window.planWatch.dispose();
  });

  it('resumes a plan decided elsewhere once, by the watch, and the job goes on', async () => {
    const window = windowOf(tickets);
    server.script(planTurn(PLAN_V1));
    const jobId = await window.newJob('Archive cancelled orders');
    const stop = window.entries.get(jobId)?.view?.stop;
    if (stop?.kind !== 'review' || stop.ticketId === null) throw new Error('expected a plan ticket');
    server.script([inTactical({ functionCall: call('job_complete', { summary: 'done elsewhere' }) })]);
    const requestsBefore = server.requests.length;
    // `pg-agent approvals approve` in a terminal: another store on the same folder decides the ticket.
    const terminal = new FileTicketStore(join(workspace, '.pgagent', 'approvals'), { logger: silentLogger });
    await terminal.decide(stop.ticketId, { approve: true, by: 'teammate' });
    await terminal.close();
    await expect
      .poll(async () => (await new JobStore(workspace).get(jobId)).status, { timeout: 20_000 })
      .toBe('completed');
    await window.steps.idle(jobId);
    expect(window.elsewhere).toEqual([stop.ticketId]);
    expect(server.requests.length - requestsBefore, 'one tactical model call: resumed once').toBe(1);
    expect(await tickets.get(stop.ticketId)).toMatchObject({
      status: 'EXECUTED',
      decisions: [{ by: 'teammate', approve: true }],
    });
    // Refreshes after it do not resume it again.
    await window.refresh(jobId);
    await window.refresh(jobId);
    expect(window.elsewhere).toEqual([stop.ticketId]);
    window.planWatch.dispose();
  });

  it("approves a job's write at its lens on the job's one decision path (decideWrite), reading each config file once", async () => {
    const window = windowOf(tickets);
    server.script(planTurn(PLAN_V1));
    const jobId = await window.newJob('Archive cancelled orders');
    server.script([inTactical({ functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) })]);
    const atWrite = await window.approve(jobId);
    if (atWrite?.stop.kind !== 'approval') throw new Error(`expected a held write, got ${atWrite?.stop.kind}`);
    // The job's write at the inline approval, as JobParts wires it; the lens's owner is what a click decides through.
    const shown: HeldWrite[] = [];
    const writes = new JobHeldWrites({
      error: (code, message) => new Error(`${code}: ${message}`) as never,
      tickets: { ticketStore: () => Promise.resolve(tickets) } as unknown as WindowTickets,
      approval: { track: (held: HeldWrite) => shown.push(held) } as unknown as InlineApproval,
      runners: window.runners,
      logger: silentLogger,
      hooks: {
        run: (id, action, message, step) => window.steps.run(id, action, message, step, true),
        ended: () => Promise.resolve(),
        fail: () => undefined,
        isFinal: () => false,
        changed: () => undefined,
      },
    });
    await writes.handOver(atWrite, false);
    const owner = shown[0]?.owner;
    if (!owner?.decide) throw new Error("expected the job's write shown with its owner's decision");

    const cancelled = () =>
      queryValue(shop.scratch.url, "SELECT count(*) FROM orders WHERE status = 'cancelled' AND id <= 10").then(Number);
    const before = await cancelled();
    expect(before).toBeGreaterThan(0);
    server.script([inTactical({ functionCall: call('job_complete', { summary: 'archived' }) })]);
    counted.files.length = 0;
    vi.mocked(authorizeAtClaim).mockClear();
    const done = await owner.decide({ approve: true, by: 'reviewer', comment: 'approved in VS Code' });

    if (typeof done !== 'object') throw new Error(`expected the write run by the job, got ${done}`);
    const updated = done.tables.filter((t) => t.via === 'direct').reduce((n, t) => n + t.updated, 0);
    expect(updated, 'orders archived by the statement itself').toBe(before);
    expect(await cancelled()).toBe(0);
    expect(await tickets.get(atWrite.stop.ticketId)).toMatchObject({
      status: 'EXECUTED',
      decisions: [{ by: 'reviewer', approve: true }],
    });
    expect((await new JobStore(workspace).get(jobId)).status).toBe('completed');
    // The step's settings read each file once; the runner's early check and the executor's claim use that read.
    expect(
      readsOf((p) => p === configFile()),
      '.pgagent/config.json reads of the click',
    ).toBe(1);
    expect(
      readsOf((p) => p === ownFile()),
      'own config reads of the click',
    ).toBe(1);
    expect(vi.mocked(authorizeAtClaim), 'the runner and the executor each check the policy').toHaveBeenCalledTimes(2);
    console.info(`job write approval, config reads: ${readsOf((p) => p === configFile())}`);
    window.planWatch.dispose();
  });
});
