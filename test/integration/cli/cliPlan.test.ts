// `pg-agent plan` on real PostgreSQL with two scripted model servers at once (Gemini's API for analyst A,
// an OpenAI-compatible one for analyst B): convergence, questions → clarify, refuted SQL, fallback,
// a degraded round, resumes in new processes, and execute → a job at its plan review.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import {
  analysis,
  convergingRound,
  CUTOFF_DELETE,
  GOOD_SQL,
  isAnalysis,
  isPlan,
  isReviewOf,
  isSynthesis,
  PLAN,
  review,
  synthesis,
} from '../../support/collabScript';
import { call, inTactical, tactical } from '../../support/jobScript';
import { queryValue } from '../../support/scratchDatabase';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { SHOP_FINGERPRINT } from '../../support/shopSchema';
import { scriptedModelEnv, useShopScratch } from '../../support/shopDatabase';

interface PlanJsonOut {
  id: string;
  phase: string;
  asked: string | null;
  awaiting: { kind: string; questions: string[]; options: number } | null;
  currentRound: number;
  rounds: { number: number; score: number; recommendation: string; degraded: boolean }[];
  decisions: { kind: string; by: string; at: string; option?: number; text?: string }[];
  latest: {
    analyses: {
      label: string;
      model: string;
      requestedModel: string;
      fallback: { from: string; reason: string } | null;
      perspective: string;
      sameModelPerspective: boolean;
      tokens: { input: number };
    }[];
    refuted: { approachId: string; sql: string; refuted: string[] }[];
    solutions: {
      name: string;
      feasibility: number;
      refuted: string[];
      risk: string;
      rowsTouched: number | null;
      sourceModels: string[];
      affectedObjects: string[];
    }[];
    convergence: {
      score: number;
      components: { agreement: number; feasibility: number; stability: number };
      recommendation: string;
    };
    clarification_questions: string[];
    degraded: { reason: string } | null;
  } | null;
  plan: {
    tasks: { id: string; depends_on: string[] }[];
    _metadata: { source: string; session_id: string; chosen_by: string };
  } | null;
  implPlan: string | null;
  jobId: string | null;
  usage: { total: { calls: number; inputTokens: number }; byModel: { model: string; usage: { calls: number } }[] };
}

const SESSION_ID = /collab_[0-9a-f]{16}/;
const MODELS = 'gemini:gemini-2.5-pro,openai:qwen2.5-coder';
const TASK = 'Remove cancelled orders created before 2024-03-01';

describe.runIf(postgresAvailable)('pg-agent plan with two scripted model servers', () => {
  let scratch: ScratchDatabase;
  let gemini: ScriptedModelServer;
  let openai: ScriptedModelServer;
  let workspace: string;
  const env = () => ({
    ...scriptedModelEnv(gemini),
    OPENAI_BASE_URL: `${openai.url}/v1`,
  });
  const plan = (argv: string[], options: { answers?: string[] } = {}) =>
    runPgAgent(['plan', '--db', scratch.url, '--workspace', workspace, ...argv], {
      cwd: workspace,
      env: env(),
      ...options,
    });
  const json = (stdout: string) => JSON.parse(stdout) as PlanJsonOut;
  /** `pg-agent plan new --models MODELS --json <flags> -- TASK`. */
  const planNew = (...flags: string[]) => plan(['new', '--models', MODELS, '--json', ...flags, '--', TASK]);

  /** Both analysts, both reviews and the synthesis of one converging round, all answered by `server`. */
  const scriptWholeRoundOn = (server: ScriptedModelServer) => server.script(convergingRound());

  /** Round replies: analyst A and the review of B on Gemini, analyst B and the review of A on the OpenAI endpoint. */
  function scriptRound(
    options: { a?: object; b?: object; reviewByA?: object; reviewByB?: object; synthesis?: object } = {},
  ) {
    gemini.script([
      { match: isAnalysis('data/architecture'), reply: { json: options.a ?? analysis('Delete directly', GOOD_SQL) } },
      { match: isReviewOf('B'), reply: { json: options.reviewByA ?? review(3, 0) } },
      { match: isSynthesis, reply: { json: options.synthesis ?? synthesis() } },
    ]);
    openai.script([
      {
        match: isAnalysis('implementation/SQL'),
        reply: { json: options.b ?? analysis('Count then delete', GOOD_SQL) },
      },
      { match: isReviewOf('A'), reply: { json: options.reviewByB ?? review(2, 0) } },
    ]);
  }

  const shop = useShopScratch();
  beforeAll(() => void (scratch = shop.scratch));
  beforeEach(async () => {
    [gemini, openai] = await Promise.all([startScriptedModelServer(), startScriptedModelServer()]);
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-cli-plan-'));
  });
  afterEach(async () => {
    await Promise.all([gemini.close(), openai.close()]);
    rmSync(workspace, { recursive: true, force: true });
  });

  it('converges in round 1, writes context.json and synthesis.json, then a new process plans option 1 and execute makes a job at review', async () => {
    const fingerprint = await queryValue(scratch.url, SHOP_FINGERPRINT);
    scriptRound();
    const started = await planNew('--no-input');
    expect(started.code, started.stderr).toBe(3); // converged: a person must choose an option
    const first = json(started.stdout);
    expect(first.id).toMatch(SESSION_ID);
    expect(first.phase).toBe('awaiting-decision');
    expect(first.awaiting).toMatchObject({ kind: 'choice', options: 2 });
    expect(started.stderr).toContain(`Session ${first.id} waits for a choice among 2 option(s)`);
    expect(first.latest?.convergence).toEqual({
      score: 1,
      components: { agreement: 1, feasibility: 1, stability: 1 },
      openDisagreements: 0,
      newInsights: [],
      recommendation: 'converged',
    });
    expect(first.latest?.analyses.map((a) => [a.label, a.perspective, a.model, a.fallback])).toEqual([
      ['A', 'data/architecture', 'gemini:gemini-2.5-pro', null],
      ['B', 'implementation/SQL', 'openai:qwen2.5-coder', null],
    ]);
    // Verified against the database: the DELETE's preview saw the cascade and the trigger, and nothing changed.
    const option1 = first.latest?.solutions[0];
    expect(option1).toMatchObject({ feasibility: 1, refuted: [], sourceModels: ['gemini:gemini-2.5-pro'] });
    expect(option1?.rowsTouched).toBeGreaterThan(0);
    expect(option1?.affectedObjects).toEqual(expect.arrayContaining(['orders', 'order_items', 'audit_log']));
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    // The reviews were anonymised: each model saw "Analysis A/B", never the other model's name.
    const reviewOfA = openai.requests.find(isReviewOf('A'));
    expect(reviewOfA?.text).not.toContain('gemini');
    expect(first.usage.byModel.map((m) => [m.model, m.usage.calls])).toEqual([
      ['gemini:gemini-2.5-pro', 3],
      ['openai:qwen2.5-coder', 2],
    ]);

    const dir = join(workspace, '.pgagent', 'collab', first.id);
    for (const file of ['session-state.json', 'context.json', 'rounds/1/synthesis.json', 'audit.jsonl'])
      expect(existsSync(join(dir, file)), file).toBe(true);
    const context = JSON.parse(readFileSync(join(dir, 'context.json'), 'utf8')) as {
      tables: { name: string; totalBytes: number | null; stats: unknown }[];
      fkPaths: string[];
    };
    expect(context.tables[0]?.name).toBe('orders');
    expect(context.tables[0]?.totalBytes).toBeGreaterThan(0);
    expect(context.tables[0]?.stats).not.toBeNull();
    expect(context.fkPaths.some((p) => p.includes('order_items.order_id → orders.id'))).toBe(true);
    const audit = readFileSync(join(dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; model?: string });
    expect(audit.filter((r) => r.type === 'model_call')).toHaveLength(5);

    // Option 1 in a new Node process (the built CLI), from the session folder alone.
    gemini.script([{ match: isPlan, reply: { json: PLAN } }]);
    const chosen = await runBuiltCli(
      ['plan', 'decide', first.id, '--option', '1', '--db', scratch.url, '--workspace', workspace, '--json'],
      env(),
    );
    expect(chosen.code, chosen.stderr).toBe(0);
    const planned = json(chosen.stdout);
    expect(planned.phase).toBe('planned');
    expect(planned.plan?._metadata).toMatchObject({
      source: 'collaborative-discussion',
      session_id: first.id,
      chosen_by: 'tester',
    });
    expect(planned.implPlan).toContain('## Implementation Steps');
    expect(planned.implPlan).toContain(CUTOFF_DELETE);
    expect(planned.decisions.map((d) => [d.kind, d.by, d.option])).toEqual([['option', 'tester', 1]]);
    expect(existsSync(join(dir, 'IMPL_PLAN.md'))).toBe(true);

    const executed = await plan(['execute', first.id, '--json']);
    expect(executed.code, executed.stderr).toBe(0);
    const done = json(executed.stdout);
    expect(done).toMatchObject({ id: first.id, phase: 'executed' });
    expect(done.jobId).toMatch(/^job_[0-9a-f]{16}$/);
    const job = await runPgAgent(['job', 'show', done.jobId ?? '', '--workspace', workspace, '--json'], {
      cwd: workspace,
      env: env(),
    });
    expect(job.code, job.stderr).toBe(0);
    const shown = JSON.parse(job.stdout) as {
      job: { status: string; reviewCycles: number };
      stop: { kind: string };
      todos: { id: string; status: string; depends_on?: string[]; sql?: string }[];
      plan: string;
      usage: { calls: number };
    };
    // The discussion's model calls are the job's planning calls (usage, and the review chat's debug tools).
    expect(shown.usage.calls).toBe(done.usage.total.calls);
    expect(shown.job).toMatchObject({ status: 'pending_review', reviewCycles: 1 });
    expect(shown.stop.kind).toBe('review');
    expect(shown.todos).toEqual([
      expect.objectContaining({ id: 't1', status: 'pending' }),
      expect.objectContaining({ id: 't2', status: 'pending', depends_on: ['t1'], sql: CUTOFF_DELETE }),
    ]);
    expect(shown.plan).toContain('# Implementation Plan: Remove old cancelled orders');
    const workspaceMd = readFileSync(join(workspace, '.pgagent', 'jobs', done.jobId ?? '', 'workspace.md'), 'utf8');
    expect(workspaceMd).toContain(
      `collaborative planning session ${first.id}: option 1 "Delete in one statement" chosen by tester`,
    );
    // Nothing ran: the write waits for the job's review and then its own ticket.
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    // Approving the job's plan resumes it from the review stop; its write is held with a ticket (exit 3).
    gemini.script([inTactical({ functionCall: call('run_sql', { sql: CUTOFF_DELETE, todo_id: 't2' }) })]);
    const approved = await runPgAgent(
      ['job', 'approve', done.jobId ?? '', '--db', scratch.url, '--workspace', workspace, '--json', '--no-input'],
      { cwd: workspace, env: env() },
    );
    expect(approved.code, approved.stderr).toBe(3);
    const held = JSON.parse(approved.stdout) as {
      stop: { kind: string; todoId?: string; sql?: string };
      ticket?: { status: string };
    };
    expect(held.stop).toMatchObject({ kind: 'approval', todoId: 't2', sql: CUTOFF_DELETE });
    expect(held.ticket?.status).toBe('PENDING_APPROVAL');
    expect(gemini.requests.filter(tactical).at(-1)?.text).toContain('The plan was approved by tester');
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
    const again = await plan(['execute', first.id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`was already executed as job ${done.jobId ?? ''}`);
  });

  it('more than 3 disagreements ask the person; --clarify runs round 2 with the answer and converges', async () => {
    scriptRound({
      reviewByA: review(0, 3),
      reviewByB: review(0, 2),
      synthesis: synthesis(['Are cancelled orders needed for reporting?']),
    });
    const started = await planNew();
    expect(started.code, started.stderr).toBe(3);
    const first = json(started.stdout);
    expect(first.latest?.convergence).toMatchObject({
      components: { agreement: 0, feasibility: 1, stability: 1 },
      openDisagreements: 5,
      recommendation: 'user_input_needed',
    });
    expect(first.awaiting).toMatchObject({
      kind: 'clarification',
      questions: ['Are cancelled orders needed for reporting?'],
    });
    expect(first.asked).toContain('Are cancelled orders needed for reporting?');
    expect(started.stderr).toContain(`Session ${first.id} waits for clarification`);

    scriptRound();
    const clarified = await plan([
      'decide',
      first.id,
      '--clarify',
      'Not needed for reporting; keep nothing.',
      '--json',
    ]);
    expect(clarified.code, clarified.stderr).toBe(3);
    const second = json(clarified.stdout);
    expect(second.currentRound).toBe(2);
    expect(second.rounds.map((r) => [r.number, r.recommendation])).toEqual([
      [1, 'user_input_needed'],
      [2, 'converged'],
    ]);
    expect(second.decisions).toEqual([
      expect.objectContaining({ kind: 'clarify', by: 'tester', text: 'Not needed for reporting; keep nothing.' }),
    ]);
    // The answer reached both analysts, with round 1 as history.
    for (const server of [gemini, openai]) {
      const round2 = server.requests.filter((r) => r.text.includes('Your perspective:')).at(-1);
      expect(round2?.text).toContain('Not needed for reporting; keep nothing.');
      expect(round2?.text).toContain('disputed: disputed point 1');
    }
  });

  it('SQL that fails verification lowers feasibility and is shown as refuted', async () => {
    const badB = analysis('Archive by flag', [
      { sql: 'SELECT archived_at FROM orders', purpose: 'find archived ones', kind: 'read', objects: ['orders'] },
      { sql: CUTOFF_DELETE, purpose: 'delete', kind: 'write', objects: ['orders'] },
      { sql: 'DELET FROM orders', purpose: 'typo', kind: 'write', objects: ['orders'] },
    ]);
    scriptRound({ b: badB });
    const run = await planNew('--max-rounds', '1');
    expect(run.code, run.stderr).toBe(3);
    const out = json(run.stdout);
    const refuted = out.latest?.refuted ?? [];
    expect(refuted.find((r) => r.sql === 'SELECT archived_at FROM orders')?.refuted.join(' ')).toContain(
      'EXPLAIN fails: column "archived_at" does not exist',
    );
    expect(refuted.find((r) => r.sql === CUTOFF_DELETE && r.approachId === 'B1')?.refuted.join(' ')).toMatch(
      /touches .*order_items.*, which the proposal does not claim/,
    );
    expect(refuted.find((r) => r.sql === 'DELET FROM orders')?.refuted[0]).toMatch(/^does not parse/);
    // 2 good of A + 0 of 3 of B feasible → 2/5.
    expect(out.latest?.convergence.components.feasibility).toBe(0.4);
    expect(out.latest?.convergence.score).toBe(0.82); // 0.5·1 + 0.3·0.4 + 0.2·1, where all-feasible SQL scores 1
    expect(out.latest?.solutions[1]).toMatchObject({ feasibility: 0 });
    expect(out.latest?.solutions[1]?.refuted.length).toBe(3);
    const text = await plan(['show', out.id]);
    expect(text.stdout).toContain('Refuted by the database:');
    expect(text.stdout).toContain('B1 sql#1: EXPLAIN fails');
  });

  it('one provider down: the other model takes over, recorded; with one model the two perspectives are shown as such', async () => {
    openai.script([{ times: 20, reply: { error: { status: 503, message: 'model is loading' } } }]);
    scriptWholeRoundOn(gemini);
    const run = await planNew();
    expect(run.code, run.stderr).toBe(3);
    const out = json(run.stdout);
    expect(out.latest?.analyses[1]).toMatchObject({
      label: 'B',
      model: 'gemini:gemini-2.5-pro',
      requestedModel: 'openai:qwen2.5-coder',
    });
    expect(out.latest?.analyses[1]?.fallback?.reason).toContain('model is loading');
    expect(run.stderr).toContain('openai:qwen2.5-coder failed');
    const audit = readFileSync(join(workspace, '.pgagent', 'collab', out.id, 'audit.jsonl'), 'utf8');
    expect(audit).toContain('"type":"fallback"');
  });

  it('with one model, the two analysts are two perspectives of the same model, shown as such', async () => {
    scriptWholeRoundOn(gemini);
    // SPEC §6's short form, without "new".
    const single = await runPgAgent(['plan', '--db', scratch.url, '--workspace', workspace, '--', TASK], {
      cwd: workspace,
      env: scriptedModelEnv(gemini),
    });
    expect(single.code, single.stderr).toBe(3);
    expect(single.stdout).toContain('Models: gemini:gemini-2.5-flash (two perspectives of the same model)');
    expect(single.stdout).toContain(
      'Analysis A (data/architecture): gemini:gemini-2.5-flash — same model, other perspective',
    );
    expect(single.stdout).toContain(
      'Analysis B (implementation/SQL): gemini:gemini-2.5-flash — same model, other perspective',
    );
    expect(openai.requests).toHaveLength(0);
  });

  it('garbage JSON from the synthesis gets one repair, then a degraded round that says so', async () => {
    gemini.script([
      { match: isAnalysis('data/architecture'), reply: { json: analysis('Delete directly', GOOD_SQL) } },
      { match: isReviewOf('B'), reply: { json: review(3, 0) } },
      { match: isSynthesis, times: 2, reply: { text: 'Here are the options: {{ not json' } },
    ]);
    openai.script([
      { match: isAnalysis('implementation/SQL'), reply: { json: analysis('Count then delete', GOOD_SQL) } },
      { match: isReviewOf('A'), reply: { json: review(3, 0) } },
    ]);
    const run = await planNew();
    expect(run.code, run.stderr).toBe(3);
    const out = json(run.stdout);
    expect(gemini.requests.filter(isSynthesis)).toHaveLength(2); // the first reply and its one repair
    expect(gemini.requests.filter(isSynthesis)[1]?.text).toContain('Your previous reply was not valid');
    expect(out.latest?.degraded?.reason).toContain('could not be read after one repair');
    expect(out.rounds[0]?.degraded).toBe(true);
    expect(out.latest?.solutions.map((s) => s.name)).toEqual(['Delete directly', 'Count then delete']);
    const text = await plan(['show', out.id]);
    expect(text.stdout).toContain('DEGRADED ROUND');
    expect(out.usage.total.calls).toBe(6);
  });

  it('an interrupted round keeps the session; --more in a new call goes on; --redirect starts over; a terminal decides at the prompt', async () => {
    // Each server fails its analyst's call and the other analyst's fallback.
    gemini.script([{ times: 2, reply: { error: { status: 401, message: 'API key not valid' } } }]);
    openai.script([{ times: 2, reply: { error: { status: 401, message: 'invalid api key' } } }]);
    const failed = await planNew();
    expect(failed.code).toBe(1);
    const id = SESSION_ID.exec(failed.stderr)?.[0] ?? '';
    expect(failed.stderr).toContain(`Session ${id} created`);
    // --json still names the session and where it stands, with the error.
    expect(JSON.parse(failed.stdout)).toMatchObject({ id, phase: 'analysis', error: { code: 'INTERNAL' } });
    const shown = json((await plan(['show', id, '--json'])).stdout);
    expect(shown).toMatchObject({ id, phase: 'analysis', currentRound: 0 });
    expect(shown.asked).toContain('the interrupted round to go on (more analysis)');

    scriptRound();
    const resumed = await plan(['decide', id, '--more', '--json']);
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(json(resumed.stdout)).toMatchObject({ id, phase: 'awaiting-decision', currentRound: 1 });

    scriptRound({ a: analysis('Archive first', GOOD_SQL) });
    const redirected = await plan([
      'decide',
      id,
      '--redirect',
      'Archive them to orders_archive instead of deleting',
      '--json',
    ]);
    expect(redirected.code, redirected.stderr).toBe(3);
    const after = json(redirected.stdout);
    expect(after.rounds.map((r) => [r.number, (r as { superseded?: boolean }).superseded])).toEqual([
      [1, true],
      [2, false],
    ]);
    const round2 = gemini.requests.filter(isAnalysis('data/architecture')).at(-1);
    expect(round2?.text).toContain(
      'New direction from the person (replaces earlier approaches): Archive them to orders_archive',
    );
    expect(round2?.text).not.toContain('Earlier rounds:');

    // On a terminal the decision point is a prompt: "2" picks option 2 and the plan is written.
    gemini.script([{ match: isPlan, reply: { json: PLAN } }]);
    scriptRound();
    const decided = await plan(['decide', id, '--more'], { answers: ['2'] });
    expect(decided.code, decided.stderr).toBe(0);
    expect(decided.prompts[0]).toContain('Decide: option number (1-2)');
    expect(decided.stdout).toContain(`Session ${id} — planned`);
    const final = json((await plan(['show', id, '--json'])).stdout);
    expect(final.decisions.map((d) => d.kind)).toEqual(['more', 'redirect', 'more', 'option']);
    expect(final.decisions.at(-1)).toMatchObject({ kind: 'option', option: 2, by: 'tester' });
  });

  it('bad input: unknown session, malformed id, two decisions at once, a decision the session cannot take', async () => {
    const malformed = await plan(['show', 'nope']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('is not a planning session id');
    const unknown = await plan(['show', 'collab_0123456789abcdef']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('There is no planning session collab_0123456789abcdef');
    const both = await plan(['decide', 'collab_0123456789abcdef', '--option', '1', '--more']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('exactly one of');
    const badModels = await plan(['new', '--models', 'claude:x', '--', 'task']);
    expect(badModels.code).toBe(2);
    expect(badModels.stderr).toContain('does not start with gemini: or openai:');
    const empty = await plan(['new', '--models', MODELS, '--', '   ']);
    expect(empty.code).toBe(2);
    const typo = await plan(['shwo']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Unknown plan subcommand "shwo"');
    const notPlanned = await plan(['list', '--json']);
    expect(JSON.parse(notPlanned.stdout)).toEqual({ sessions: [] });
  });

  it('no model configured: plan new exits 1 as job and ask do, with the same JSON error, and starts no session', async () => {
    const bare = { USER: 'tester' };
    const run = (argv: string[]) =>
      runPgAgent([...argv.slice(0, 1), '--db', scratch.url, '--workspace', workspace, ...argv.slice(1)], {
        cwd: workspace,
        env: bare,
      });
    const planned = await run(['plan', 'new', '--json', '--', 'Archive cancelled orders']);
    expect(planned.code).toBe(1);
    expect(planned.stderr).toContain('pg-agent plan needs a language model');
    expect(planned.stderr).toContain('GEMINI_API_KEY');
    const planError = JSON.parse(planned.stdout) as Record<string, unknown>;
    expect(planError).toMatchObject({ status: 'error', error: { code: 'CONFIG_INVALID' } });
    const job = await run(['job', 'new', '--json', '--', 'Archive cancelled orders']);
    expect(job.code).toBe(1);
    const jobError = JSON.parse(job.stdout) as Record<string, unknown>;
    // The same shape: the same keys, the error object carrying the same fields.
    expect(Object.keys(planError).sort()).toEqual(Object.keys(jobError).sort());
    expect(Object.keys(planError.error as object).sort()).toEqual(Object.keys(jobError.error as object).sort());
    expect((await run(['ask', '--', 'how many orders?'])).code).toBe(1);
    // Nothing was started: no session folder on disk.
    expect(
      existsSync(join(workspace, '.pgagent', 'collab')) ? readdirSync(join(workspace, '.pgagent', 'collab')) : [],
    ).toEqual([]);
  });
});

function runBuiltCli(
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = join(process.cwd(), 'dist', 'cli.js');
  expect(existsSync(cli), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...argv], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}
