// The review chat on real job folders (JobStore in a temp workspace, real job history commits) with the
// real Gemini provider pointed at the scripted model server: the only fake is the language model.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PgliteDb } from '../../../../src/core/db/pgliteDb';
import { introspectSchema } from '../../../../src/core/db/introspect';
import { AgentError } from '../../../../src/core/platform/errors';
import type { Job } from '../../../../src/core/jobs/job';
import { jobAuditLog } from '../../../../src/core/jobs/jobAudit';
import { commitAll, initHistory, log, show } from '../../../../src/core/jobs/jobHistory';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import type { LogFields, Logger } from '../../../../src/core/platform/logger';
import { silentLogger } from '../../../../src/core/platform/logger';
import { readChat } from '../../../../src/core/review/chatLog';
import { applyPlanEdit, discardPlanEdit } from '../../../../src/core/review/planEdit';
import { rankChunks, chunkFile, tokenize } from '../../../../src/core/review/rankedSearch';
import type { ReviewChatDeps, ReviewTurnOptions } from '../../../../src/core/review/reviewChat';
import { MAX_TOOL_ROUNDS, sendReviewMessage } from '../../../../src/core/review/reviewChat';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import type { Reply, ScriptedModelServer } from '../../../support/scriptedModelServer';
import { SCRIPTED_USAGE, startScriptedModelServer } from '../../../support/scriptedModelServer';
import { scriptedGemini } from '../../../support/scriptedGemini';

const PLAN = `# Plan: archive old orders

## Step 1: Find old orders
Count the orders older than two years in public.orders.

## Step 2: Copy them to orders_archive
INSERT ... SELECT in batches of 10,000 rows.

## Step 3: Delete the copied rows
DELETE in batches of 10,000 rows, oldest first.

## Risks
Order items go with their order through the ON DELETE CASCADE foreign key.
`;

const TODOS = `- id: count-old
  title: Count old orders
  status: pending
  sql: SELECT count(*) FROM orders WHERE created_at < now() - interval '2 years'
- id: copy
  title: Copy old orders to the archive
  status: pending
  depends_on:
    - count-old
`;

const BASIC_AND_ALWAYS = [
  'read_workspace_file',
  'list_workspace_files',
  'search_workspace',
  'draft_feedback',
  'propose_plan_edit',
];
const DEBUG_TOOLS = ['get_job', 'get_audit_trail', 'get_chat_history', 'get_todos', 'get_llm_request', 'search_audit'];
const HISTORY_TOOLS = ['git_log', 'git_diff', 'git_show'];

interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: { result?: string; error?: string } };
}
interface GeminiBody {
  contents: { role: string; parts: GeminiPart[] }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
  systemInstruction?: { parts: { text: string }[] };
}

let workspace: string;
let outsideDir: string;
let clock: number;
let store: JobStore;
let server: ScriptedModelServer;

const now = () => new Date((clock += 1000));

beforeEach(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'pgagent-review-'));
  outsideDir = mkdtempSync(join(tmpdir(), 'pgagent-outside-'));
  writeFileSync(join(outsideDir, 'secret.txt'), 'not yours: the payroll password\n');
  clock = Date.parse('2026-02-01T09:00:00Z');
  store = new JobStore(workspace, { now });
  server = await startScriptedModelServer();
});

afterEach(async () => {
  await server.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(outsideDir, { recursive: true, force: true });
});

function recordingLogger(): Logger & { warnings: { message: string; fields?: LogFields }[] } {
  const warnings: { message: string; fields?: LogFields }[] = [];
  const ignore = () => undefined;
  return {
    warnings,
    trace: ignore,
    debug: ignore,
    info: ignore,
    error: ignore,
    warn: (message, fields) => void warnings.push({ message, fields }),
  };
}

function deps(extra: Partial<ReviewChatDeps> = {}): ReviewChatDeps {
  return {
    store,
    provider: scriptedGemini(server),
    logger: silentLogger,
    now,
    ...extra,
  };
}

function send(jobId: string, text: string, options: ReviewTurnOptions = {}, extra: Partial<ReviewChatDeps> = {}) {
  return sendReviewMessage(deps(extra), jobId, text, options);
}

async function newJob(title = 'Archive old orders'): Promise<Job> {
  const job = await store.create({
    title,
    connection: 'app@localhost:5432/shop',
    task: 'Archive orders older than two years.',
  });
  await store.writeFile(job.id, 'plan.md', PLAN);
  await store.writeFile(job.id, 'todos.yaml', TODOS);
  return job;
}

/** The model calls these tools in one round, then answers `reply`. */
function script(calls: { name: string; args: object }[], reply = 'Done.'): void {
  const rules: { reply: Reply }[] = calls.length === 0 ? [] : [{ reply: { functionCalls: calls } }];
  server.script([...rules, { reply: { text: reply } }]);
}

function body(n: number): GeminiBody {
  const request = server.requests[n];
  if (!request) throw new Error(`the model got no request #${n}`);
  return request.body as GeminiBody;
}

function toolNames(n: number): string[] {
  return (body(n).tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
}

/** The tool results the model was sent back in request n (the last user turn). */
function toolResults(n: number): { name: string; result?: string; error?: string }[] {
  const last = body(n).contents.at(-1);
  return (last?.parts ?? []).flatMap((p) =>
    p.functionResponse ? [{ name: p.functionResponse.name, ...p.functionResponse.response }] : [],
  );
}

function resultOf(n: number, i: number): string {
  const r = toolResults(n)[i];
  if (!r) throw new Error(`request #${n} has no tool result ${i}`);
  if (r.result === undefined) throw new Error(`tool ${r.name} failed: ${r.error ?? '?'}`);
  return r.result;
}

function errorOf(n: number, i: number): string {
  const r = toolResults(n)[i];
  if (!r) throw new Error(`request #${n} has no tool result ${i}`);
  if (r.error === undefined) throw new Error(`tool ${r.name} did not fail: ${(r.result ?? '').slice(0, 200)}`);
  return r.error;
}

function auditRecords(jobId: string): Record<string, unknown>[] {
  return readFileSync(join(store.jobDir(jobId), 'audit.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function commitPlan(jobId: string, plan: string, message: string): Promise<string> {
  await store.writeFile(jobId, 'plan.md', plan);
  await initHistory(store.jobDir(jobId));
  return commitAll(store.jobDir(jobId), message);
}

describe('basic tools on a real job folder', () => {
  it('reads a job file and hands its text to the model', async () => {
    const job = await newJob();
    script([{ name: 'read_workspace_file', args: { path: 'plan.md' } }], 'The plan has three steps.');
    const turn = await send(job.id, 'What does the plan do?');
    expect(resultOf(1, 0)).toBe(PLAN);
    expect(turn.reply).toBe('The plan has three steps.');
    expect(turn.tools).toEqual([
      { name: 'read_workspace_file', args: { path: 'plan.md' }, ok: true, summary: 'read plan.md' },
    ]);
  });

  it('lists the job folder without the history, showing symlinks as links it does not follow', async () => {
    const job = await newJob();
    await commitPlan(job.id, PLAN, 'first');
    await store.writeFile(job.id, 'sql/001-count-old.sql', 'SELECT 1;\n');
    symlinkSync(outsideDir, join(store.jobDir(job.id), 'docs'));
    script([
      { name: 'list_workspace_files', args: {} },
      { name: 'list_workspace_files', args: { path: 'sql' } },
    ]);
    await send(job.id, 'Which files are there?');
    const all = resultOf(1, 0);
    expect(all).toContain('plan.md (');
    expect(all).toContain('sql/001-count-old.sql (10 bytes)');
    expect(all).toContain('docs (symbolic link, not followed)');
    expect(all).not.toContain('.history');
    expect(all).not.toContain('secret.txt');
    expect(resultOf(1, 1)).toBe('sql/001-count-old.sql (10 bytes)');
  });

  it('searches the job files case-insensitively with file:line hits, leaving out the chat and audit logs', async () => {
    const job = await newJob();
    await store.appendJsonl(job.id, 'audit.jsonl', {
      type: 'error',
      node: 'x',
      code: 'INTERNAL',
      message: 'cascade exploded',
    });
    script([
      { name: 'search_workspace', args: { query: 'CASCADE' } },
      { name: 'search_workspace', args: { query: 'no such words here' } },
    ]);
    await send(job.id, 'Where is the cascade mentioned?');
    expect(resultOf(1, 0)).toBe(
      'plan.md:13: Order items go with their order through the ON DELETE CASCADE foreign key.',
    );
    expect(resultOf(1, 1)).toBe('"no such words here" does not occur in the job files.');
  });

  it('cuts long results with a note and reads on from an offset', async () => {
    const job = await newJob();
    const big = `${'a'.repeat(7990)}MIDDLE-MARK${'b'.repeat(12_000)}END-MARK\n`;
    await store.writeFile(job.id, 'notes/big.md', big);
    script([{ name: 'read_workspace_file', args: { path: 'notes/big.md' } }]);
    script([{ name: 'read_workspace_file', args: { path: 'notes/big.md', offset: 8000 } }]);
    await send(job.id, 'Read the big note');
    await send(job.id, 'Read on');
    const first = resultOf(1, 0);
    expect(first.length).toBeLessThan(8200);
    expect(first).toContain(`more characters; call read_workspace_file with path notes/big.md and offset 8000`);
    expect(first).not.toContain('END-MARK');
    const second = resultOf(3, 0);
    expect(first.startsWith(`${'a'.repeat(7990)}MIDDLE-MAR\n`)).toBe(true);
    expect(second.startsWith(`K${'b'.repeat(100)}`)).toBe(true);
    expect(second).toContain('more characters');
  });

  it('answers bad arguments and unknown tools with readable errors and goes on', async () => {
    const job = await newJob();
    script(
      [
        { name: 'read_workspace_file', args: {} },
        { name: 'read_workspace_file', args: { path: 42 } },
        { name: 'drop_table', args: { table: 'orders' } },
        { name: 'read_workspace_file', args: { path: 'plan.md', mode: 'w' } },
      ],
      'Sorry, I could not read it.',
    );
    const turn = await send(job.id, 'Read it');
    expect(errorOf(1, 0)).toMatch(/^Bad arguments for read_workspace_file: path: /);
    expect(errorOf(1, 1)).toMatch(/^Bad arguments for read_workspace_file: path: .*string/);
    expect(errorOf(1, 2)).toBe('There is no tool "drop_table" in the review chat.');
    expect(errorOf(1, 3)).toMatch(/^Bad arguments for read_workspace_file: .*mode/);
    expect(turn.tools.map((t) => t.ok)).toEqual([false, false, false, false]);
    expect(turn.reply).toBe('Sorry, I could not read it.');
  });
});

describe('confinement to the job folder', () => {
  it('refuses traversal, absolute paths, symlinks out, other jobs and the history, as tool errors the model reads', async () => {
    const job = await newJob();
    const other = await store.create({ title: 'Other job', connection: 'local' });
    await store.writeFile(other.id, 'plan.md', 'OTHER JOB PLAN, not for this chat\n');
    const dir = store.jobDir(job.id);
    await commitPlan(job.id, PLAN, 'first'); // so .history/config exists
    expect(existsSync(join(dir, '.history', 'config'))).toBe(true);
    symlinkSync(join(outsideDir, 'secret.txt'), join(dir, 'notes.md'));
    symlinkSync(outsideDir, join(dir, 'docs'));
    symlinkSync(store.jobDir(other.id), join(dir, 'peer'));
    const reads = [
      `../${other.id}/plan.md`,
      join(store.jobDir(other.id), 'plan.md'),
      join(outsideDir, 'secret.txt'),
      'notes.md',
      'docs/secret.txt',
      'peer/plan.md',
      '.history/config',
      '..\\..\\secret.txt',
      'sql/../../secret.txt',
    ];
    script(
      [
        ...reads.map((path) => ({ name: 'read_workspace_file', args: { path } })),
        { name: 'list_workspace_files', args: { path: '../' } },
        { name: 'list_workspace_files', args: { path: 'docs' } },
        { name: 'list_workspace_files', args: { path: '.history' } },
        { name: 'search_workspace', args: { query: 'not yours' } },
        { name: 'git_show', args: { commit: 'HEAD', path: '../secret.txt' } },
      ],
      'I can only read this job.',
    );
    const turn = await send(job.id, 'Show me everything');

    const errors = reads.map((_, i) => errorOf(1, i));
    expect(errors[0]).toMatch(/not a file of this job: the path climbs out with "\.\."/);
    expect(errors[1]).toMatch(/not a file of this job: the path is absolute/);
    expect(errors[2]).toMatch(/the path is absolute/);
    expect(errors[3]).toMatch(/links outside the job folder/);
    expect(errors[4]).toMatch(/links outside the job folder/);
    expect(errors[5]).toMatch(/links outside the job folder/);
    expect(errors[6]).toMatch(/the job history is read with the git tools/);
    expect(errors[7]).toMatch(/climbs out/);
    expect(errors[8]).toMatch(/climbs out/);
    expect(errorOf(1, 9)).toMatch(/climbs out/);
    expect(errorOf(1, 10)).toMatch(/docs is a symbolic link, which the review chat does not follow/);
    expect(errorOf(1, 11)).toMatch(/job history is read with the git tools/);
    expect(resultOf(1, 12)).toBe('"not yours" does not occur in the job files.');
    expect(errorOf(1, 13)).toMatch(/climbs out/);
    expect(turn.tools.filter((t) => t.ok)).toHaveLength(1);
    // Nothing from outside reached the model in any request.
    for (const request of server.requests) {
      expect(request.text).not.toContain('payroll password');
      expect(request.text).not.toContain('OTHER JOB PLAN');
      expect(request.text).not.toContain('repositoryformatversion');
    }
  });
});

describe('tool tiers', () => {
  it('gives a planning job without history only the basic tools and the hand-over tools', async () => {
    const job = await newJob();
    script([{ name: 'get_audit_trail', args: {} }], 'No debugging here.');
    const turn = await send(job.id, 'What is in the plan?');
    expect(turn.tiers).toEqual(['basic']);
    expect(toolNames(0).sort()).toEqual([...BASIC_AND_ALWAYS].sort());
    expect(errorOf(1, 0)).toMatch(/get_audit_trail is a debug tool and the debug tier is not on/);
    expect(body(0).systemInstruction?.parts[0]?.text).toContain('Not on this turn: research, history, debug.');
  });

  it('adds the debug tools for a failed job, when the person switches debugging on, and for /debug', async () => {
    const failed = await newJob('Failed one');
    await store.setStatus(failed.id, 'failed', 'relation does not exist');
    const planning = await newJob('Planning one');
    script([]);
    script([]);
    script([]);
    script([]);
    const a = await send(failed.id, 'What happened?');
    const b = await send(planning.id, 'Look at the trail', { debug: true });
    const c = await send(planning.id, '/debug why is todo copy pending?');
    const d = await send(planning.id, 'And the plan?');
    expect(a.tiers).toContain('debug');
    expect(b.tiers).toContain('debug');
    expect(c.tiers).toContain('debug');
    expect(d.tiers).not.toContain('debug');
    for (const n of [0, 1, 2]) expect(toolNames(n)).toEqual(expect.arrayContaining(DEBUG_TOOLS));
    for (const name of DEBUG_TOOLS) expect(toolNames(3)).not.toContain(name);
  });

  it('adds the history tools only once the job history has a commit', async () => {
    const job = await newJob();
    await initHistory(store.jobDir(job.id)); // a history without commits is not enough
    script([]);
    script([]);
    await send(job.id, 'Before');
    await commitAll(store.jobDir(job.id), 'Review cycle 1: plan ready for review');
    const turn = await send(job.id, 'After');
    for (const name of HISTORY_TOOLS) expect(toolNames(0)).not.toContain(name);
    expect(toolNames(1)).toEqual(expect.arrayContaining(HISTORY_TOOLS));
    expect(turn.tiers).toEqual(['basic', 'history']);
  });

  it('adds ranked search when the job has files beyond the starting ones, or a schema can be loaded', async () => {
    const job = await newJob();
    await store.writeFile(job.id, 'tools/run_sql.md', '# run_sql\n');
    script([]);
    script([]);
    script([]);
    await send(job.id, 'Only the starting files');
    await send(job.id, 'With a schema', {}, { loadSnapshot: () => Promise.reject(new Error('not needed')) });
    await store.writeFile(job.id, 'sql/001-count-old.sql', 'SELECT 1;\n');
    await send(job.id, 'With SQL');
    expect(toolNames(0)).not.toContain('ranked_search');
    expect(toolNames(1)).toContain('ranked_search');
    expect(toolNames(2)).toContain('ranked_search');
  });
});

describe('history tools', () => {
  it('shows the log, a diff between commits and a file as committed', async () => {
    const job = await newJob();
    const first = await commitPlan(job.id, PLAN, 'Review cycle 1: plan ready for review');
    await commitPlan(
      job.id,
      PLAN.replace('batches of 10,000 rows.\n\n## Step 3', 'batches of 1,000 rows.\n\n## Step 3'),
      'Review cycle 2: plan ready for review',
    );
    script(
      [
        { name: 'git_log', args: {} },
        { name: 'git_diff', args: { from: 'HEAD~1', to: 'HEAD', path: 'plan.md' } },
        { name: 'git_show', args: { commit: first.slice(0, 7), path: 'plan.md' } },
        { name: 'git_show', args: { commit: 'main; rm -rf /', path: 'plan.md' } },
        { name: 'git_diff', args: { from: 'HEAD~5', to: 'HEAD', path: 'plan.md' } },
      ],
      'The batch size went down.',
    );
    const turn = await send(job.id, 'What changed between the reviews?');
    const lines = resultOf(1, 0).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^[0-9a-f]{10} \S+ Review cycle 2: plan ready for review$/);
    expect(lines[1]).toBe(
      `${first.slice(0, 10)} ${lines[1]?.split(' ')[1] ?? ''} Review cycle 1: plan ready for review`,
    );
    const diff = resultOf(1, 1);
    expect(diff).toContain('-INSERT ... SELECT in batches of 10,000 rows.');
    expect(diff).toContain('+INSERT ... SELECT in batches of 1,000 rows.');
    expect(resultOf(1, 2)).toBe(PLAN);
    expect(errorOf(1, 3)).toMatch(/is not a commit id/);
    expect(errorOf(1, 4)).toMatch(/has no HEAD~5 \(it has 2 commit\(s\)\)/);
    expect(turn.tools.map((t) => t.summary)).toEqual([
      'git log',
      'git diff HEAD~1..HEAD plan.md',
      `git show ${first.slice(0, 7)}:plan.md`,
      'git show main; rm -…:plan.md (failed)',
      'git diff HEAD~5..HEAD plan.md (failed)',
    ]);
  });
});

describe('debug tools', () => {
  it("show a failed job's record, audit trail, the agent's conversation, todos and one full model call", async () => {
    const job = await newJob();
    const audit = jobAuditLog(store, now);
    await audit.recordJob(job.id, {
      type: 'model_call',
      node: 'strategicModel',
      phase: 'strategic',
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'You are the planning agent.' },
        { role: 'user', content: 'Archive orders older than two years.' },
      ],
      response: 'Let me look at the orders table first.',
      toolCalls: [{ id: 'c1', name: 'describe_table', args: { table: 'orders' } }],
      inputTokens: 1500,
      outputTokens: 300,
      latencyMs: 900,
      costUsd: 0.002,
    });
    await audit.recordJob(job.id, {
      type: 'tool_call',
      phase: 'strategic',
      name: 'describe_table',
      args: { table: 'orders' },
      ok: true,
      result: 'orders: id, created_at',
    });
    await audit.recordJob(job.id, {
      type: 'error',
      node: 'strategicModel',
      code: 'DB_QUERY_FAILED',
      message: 'relation "orders_archive" does not exist',
    });
    await store.setStatus(job.id, 'failed', 'relation "orders_archive" does not exist');
    script(
      [
        { name: 'get_job', args: {} },
        { name: 'get_audit_trail', args: { type: 'error' } },
        { name: 'get_chat_history', args: {} },
        { name: 'get_todos', args: {} },
        { name: 'get_llm_request', args: { index: 1 } },
        { name: 'search_audit', args: { query: 'ORDERS_ARCHIVE' } },
        { name: 'get_llm_request', args: { index: 3 } },
        { name: 'get_llm_request', args: { index: 99 } },
      ],
      'The archive table does not exist yet.',
    );
    const turn = await send(job.id, 'Why did it fail?');
    expect(turn.tiers).toContain('debug');

    type Totals = { calls: number; inputTokens: number; outputTokens: number };
    const jobInfo = JSON.parse(resultOf(1, 0)) as {
      job: Job;
      modelUsage: { agent: Totals; reviewChat: Totals; total: Totals };
      auditRecords: Record<string, number>;
    };
    expect(jobInfo.job).toMatchObject({ id: job.id, status: 'failed', title: 'Archive old orders' });
    // The review chat's own first call of this turn is already recorded when get_job runs.
    expect(jobInfo.modelUsage.agent).toMatchObject({ calls: 1, inputTokens: 1500, outputTokens: 300 });
    expect(jobInfo.modelUsage.reviewChat).toMatchObject({ calls: 1, inputTokens: SCRIPTED_USAGE.inputTokens });
    expect(jobInfo.modelUsage.total).toMatchObject({ calls: 2, inputTokens: 1500 + SCRIPTED_USAGE.inputTokens });
    expect(jobInfo.auditRecords).toEqual({ model_call: 1, tool_call: 1, error: 1, status: 1 });

    expect(resultOf(1, 1)).toMatch(
      /^1 record\(s\) of type error:\n#3 \S+ error strategicModel DB_QUERY_FAILED: relation "orders_archive" does not exist$/,
    );
    const conversation = resultOf(1, 2);
    expect(conversation).toContain('#1 ');
    expect(conversation).toContain('last input: user: Archive orders older than two years.');
    expect(conversation).toContain('answered: Let me look at the orders table first.');
    expect(conversation).toContain('called: describe_table({"table":"orders"})');
    expect(resultOf(1, 3)).toContain('- [pending] copy: Copy old orders to the archive (after count-old)');
    const full = resultOf(1, 4);
    expect(full).toContain('## Response\nLet me look at the orders table first.');
    expect(full).toContain('### 1. system\nYou are the planning agent.');
    expect(full).toContain('### 2. user\nArchive orders older than two years.');
    const hits = resultOf(1, 5).split('\n');
    expect(hits.map((h) => h.split(':')[0])).toEqual(['#3 error', '#4 status']);
    expect(errorOf(1, 6)).toMatch(/Line 3 of audit.jsonl is a error record, not a model call/);
    expect(errorOf(1, 7)).toMatch(/audit.jsonl has no record at line 99/);
  });

  it('keeps audit.jsonl out of read_workspace_file unless debugging is on', async () => {
    const job = await newJob();
    await store.appendJsonl(job.id, 'audit.jsonl', { type: 'error', node: 'x', code: 'INTERNAL', message: 'boom' });
    script([{ name: 'read_workspace_file', args: { path: 'audit.jsonl' } }]);
    script([{ name: 'read_workspace_file', args: { path: './audit.jsonl' } }]);
    await send(job.id, 'Read the audit file');
    await send(job.id, 'Read the audit file', { debug: true });
    expect(errorOf(1, 0)).toMatch(/audit.jsonl is read with the debug tools/);
    expect(resultOf(3, 0)).toContain('"message":"boom"');
  });
});

describe('ranked search', () => {
  let pg: PGlite;
  let snapshot: SchemaSnapshot;

  beforeAll(async () => {
    pg = await PGlite.create();
    const db = new PgliteDb(pg, 'review-test');
    await pg.exec(`
      create table customers (id serial primary key, email text not null);
      comment on table customers is 'People who registered in the shop';
      create table orders (id serial primary key, customer_id int references customers(id), created_at timestamptz not null default now());
      comment on column orders.created_at is 'When the order was placed';
      create table order_items (id serial primary key, order_id int references orders(id) on delete cascade, sku text);
      create table shipments (id serial primary key, carrier text);
      comment on table shipments is 'Parcels handed to a carrier for delivery';
    `);
    snapshot = await db.withSession((session) => introspectSchema(session));
  });

  afterAll(async () => {
    await pg?.close();
  });

  it('folds snake_case, camelCase and plurals into the same words', () => {
    expect(tokenize('order_items')).toEqual(['order', 'item']);
    expect(tokenize('OrderItems of the Categories, indexes and classes')).toEqual([
      'order',
      'item',
      'category',
      'index',
      'class',
    ]);
  });

  it('ranks plan sections, todos, SQL files and schema tables by relevance', async () => {
    const job = await newJob();
    await store.writeFile(
      job.id,
      'sql/001-copy-old-orders.sql',
      "INSERT INTO orders_archive SELECT * FROM orders WHERE created_at < now() - interval '2 years';\n",
    );
    script([
      { name: 'ranked_search', args: { query: 'parcel delivery' } },
      { name: 'ranked_search', args: { query: 'deleting the copied rows', limit: 3 } },
      { name: 'ranked_search', args: { query: 'count old order' } },
      { name: 'ranked_search', args: { query: 'insert into orders_archive' } },
      { name: 'ranked_search', args: { query: 'zebra' } },
    ]);
    await send(job.id, 'Find things', {}, { loadSnapshot: () => Promise.resolve(snapshot) });
    expect(resultOf(1, 0).split('\n')[0]).toMatch(/^\[1\] schema: public\.shipments \(score/);
    expect(resultOf(1, 0)).toContain('Parcels handed to a carrier for delivery');
    const deleting = resultOf(1, 1);
    expect(deleting.split('\n')[0]).toMatch(
      /^\[1\] plan\.md § Plan: archive old orders › Step 3: Delete the copied rows \(lines 9-11\)/,
    );
    expect(deleting).not.toContain('[4]');
    expect(resultOf(1, 2).split('\n')[0]).toMatch(/^\[1\] todos\.yaml item count-old \(lines 1-4\)/);
    expect(resultOf(1, 3).split('\n')[0]).toMatch(/^\[1\] sql\/001-copy-old-orders\.sql \(line 1\)/);
    expect(resultOf(1, 4)).toBe('Nothing matches "zebra".');
  });

  it('searches the job files alone when the schema cannot be loaded, and says so', async () => {
    const job = await newJob();
    script([{ name: 'ranked_search', args: { query: 'cascade foreign key' } }]);
    await send(job.id, 'Find', {}, { loadSnapshot: () => Promise.reject(new Error('the database is not reachable')) });
    const result = resultOf(1, 0);
    expect(result.split('\n')[0]).toMatch(/^\[1\] plan\.md § Plan: archive old orders › Risks/);
    expect(result).toContain(
      '(the schema could not be loaded (the database is not reachable), so only the job files were searched)',
    );
  });

  it('leaves out chunks that share no word with the query', () => {
    const chunks = chunkFile('plan.md', PLAN);
    expect(rankChunks(chunks, 'the of and', 5)).toEqual([]);
    expect(rankChunks(chunks, 'risks', 5).map((h) => h.chunk.source)).toEqual([
      'plan.md § Plan: archive old orders › Risks (lines 12-13)',
    ]);
  });
});

describe('drafted feedback and plan edits', () => {
  it('drafts feedback into the turn and the chat log', async () => {
    const job = await newJob();
    const feedback = 'Step 2: use batches of 1,000 rows and check the archive count after each batch.';
    script([{ name: 'draft_feedback', args: { text: feedback } }], 'I drafted feedback for you.');
    const turn = await send(job.id, 'Help me ask for smaller batches');
    expect(turn.draftFeedback).toBe(feedback);
    expect(turn.planEdit).toBeNull();
    expect(resultOf(1, 0)).toMatch(/Request changes box/);
    const chat = await readChat(store, job.id);
    expect(chat.map((e) => e.kind)).toEqual(['user', 'draft_feedback', 'assistant']);
    expect(chat[1]).toMatchObject({ kind: 'draft_feedback', text: feedback });
    // Nothing was sent: workspace.md has no review feedback.
    expect(await store.readFile(job.id, 'workspace.md')).not.toContain('Review Feedback');
  });

  it('proposes a plan edit with its diff; applying it writes plan.md and commits it', async () => {
    const job = await newJob();
    const newPlan = PLAN.replace('batches of 10,000 rows.\n\n## Step 3', 'batches of 1,000 rows.\n\n## Step 3');
    script(
      [{ name: 'propose_plan_edit', args: { new_plan: newPlan, summary: 'smaller copy batches' } }],
      'I proposed an edit.',
    );
    const turn = await send(job.id, 'Make the copy batches smaller');
    expect(turn.planEdit).not.toBeNull();
    const edit = turn.planEdit as NonNullable<typeof turn.planEdit>;
    expect(edit.id).toMatch(/^edit_[0-9a-f]{12}$/);
    expect(edit.summary).toBe('smaller copy batches');
    expect(edit.diff).toContain(
      '-INSERT ... SELECT in batches of 10,000 rows.\n+INSERT ... SELECT in batches of 1,000 rows.',
    );
    expect(resultOf(1, 0)).toContain(`Plan edit ${edit.id} is proposed`);
    expect(await store.readFile(job.id, 'plan.md')).toBe(PLAN); // nothing changes before the person applies it
    expect((await readChat(store, job.id)).find((e) => e.kind === 'plan_edit')).toMatchObject({
      id: edit.id,
      status: 'proposed',
      diff: edit.diff,
    });

    await applyPlanEdit(store, job.id, edit.id, 'alice');
    expect(await store.readFile(job.id, 'plan.md')).toBe(newPlan);
    const [head] = await log(store.jobDir(job.id));
    expect(head?.message).toBe('Plan edited in review: smaller copy batches (applied by alice)');
    expect(await show(store.jobDir(job.id), head?.oid ?? '', 'plan.md')).toBe(newPlan);
    expect((await readChat(store, job.id)).find((e) => e.kind === 'plan_edit')).toMatchObject({
      id: edit.id,
      status: 'applied',
    });
    await expect(applyPlanEdit(store, job.id, edit.id, 'alice')).rejects.toThrow(/already applied/);
  });

  it('refuses to apply an edit after plan.md changed since the proposal', async () => {
    const job = await newJob();
    script([
      {
        name: 'propose_plan_edit',
        args: { new_plan: `${PLAN}\n## Checks\nCount the archive.\n`, summary: 'add checks' },
      },
    ]);
    const turn = await send(job.id, 'Add a checks section');
    const changed = `${PLAN}\n## Rollback\nRestore from the archive.\n`;
    await store.writeFile(job.id, 'plan.md', changed);
    const error: unknown = await applyPlanEdit(store, job.id, turn.planEdit?.id ?? '', 'alice').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('BAD_INPUT');
    expect((error as AgentError).message).toMatch(/plan\.md changed since plan edit edit_[0-9a-f]{12} was proposed/);
    expect(await store.readFile(job.id, 'plan.md')).toBe(changed);
    expect((await readChat(store, job.id)).find((e) => e.kind === 'plan_edit')).toMatchObject({ status: 'proposed' });
  });

  it('discards an edit, which can then not be applied; a newer proposal supersedes an open one', async () => {
    const job = await newJob();
    script([{ name: 'propose_plan_edit', args: { new_plan: `${PLAN}\nFirst idea.\n`, summary: 'first idea' } }]);
    script([{ name: 'propose_plan_edit', args: { new_plan: `${PLAN}\nSecond idea.\n`, summary: 'second idea' } }]);
    script([{ name: 'propose_plan_edit', args: { new_plan: PLAN, summary: 'no change' } }]);
    const first = await send(job.id, 'Idea one');
    const second = await send(job.id, 'Idea two');
    await send(job.id, 'Same plan');
    expect(errorOf(5, 0)).toMatch(/same as the current one/);
    let edits = (await readChat(store, job.id)).filter((e) => e.kind === 'plan_edit');
    expect(edits.map((e) => [e.id, e.status])).toEqual([
      [first.planEdit?.id, 'discarded'],
      [second.planEdit?.id, 'proposed'],
    ]);

    await discardPlanEdit(store, job.id, second.planEdit?.id ?? '', 'bob');
    edits = (await readChat(store, job.id)).filter((e) => e.kind === 'plan_edit');
    expect(edits.map((e) => e.status)).toEqual(['discarded', 'discarded']);
    await expect(applyPlanEdit(store, job.id, second.planEdit?.id ?? '', 'bob')).rejects.toThrow(/already discarded/);
    await expect(applyPlanEdit(store, job.id, 'edit_000000000000', 'bob')).rejects.toThrow(
      /has no plan edit edit_000000000000/,
    );
    await expect(discardPlanEdit(store, job.id, '../../x', 'bob')).rejects.toThrow(/not a plan edit id/);
    expect(await store.readFile(job.id, 'plan.md')).toBe(PLAN);
  });
});

describe('the conversation', () => {
  it('streams the reply through onText in several deltas', async () => {
    const job = await newJob();
    server.script([{ reply: { text: 'The plan copies old orders in batches, then deletes them.' } }]);
    const deltas: string[] = [];
    const turn = await send(job.id, 'Summarise the plan', { onText: (delta) => deltas.push(delta) });
    expect(server.requests[0]?.stream).toBe(true);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(turn.reply);
    expect(turn.reply).toBe('The plan copies old orders in batches, then deletes them.');
  });

  it('sends the earlier turns with the next message, drafts included', async () => {
    const job = await newJob();
    script([{ name: 'draft_feedback', args: { text: 'Use smaller batches.' } }], 'It copies old orders in batches.');
    script([], 'It deletes them oldest first.');
    await send(job.id, 'What does step 2 do?');
    await send(job.id, 'And step 3?');
    const contents = body(2).contents;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[0]?.parts[0]?.text).toBe('What does step 2 do?');
    expect(contents[1]?.parts[0]?.text).toContain('Use smaller batches.');
    expect(contents[1]?.parts[0]?.text).toContain('It copies old orders in batches.');
    expect(contents[2]?.parts[0]?.text).toBe('And step 3?');
    const system = body(2).systemInstruction?.parts[0]?.text ?? '';
    expect(system).toContain('title: Archive old orders');
    expect(system).toContain('status: planning');
    expect(system).toContain('cannot approve');
    expect((await readChat(store, job.id)).map((e) => e.kind)).toEqual([
      'user',
      'draft_feedback',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('records every model call and tool call of the turn in audit.jsonl', async () => {
    const job = await newJob();
    script([{ name: 'read_workspace_file', args: { path: 'plan.md' } }], 'Three steps.');
    const turn = await send(job.id, 'How many steps?');
    const records = auditRecords(job.id);
    const calls = records.filter((r) => r.type === 'model_call');
    expect(calls).toHaveLength(2);
    for (const call of calls)
      expect(call).toMatchObject({
        node: 'review_chat',
        phase: 'review',
        model: 'gemini-2.5-flash',
        inputTokens: SCRIPTED_USAGE.inputTokens,
        outputTokens: SCRIPTED_USAGE.outputTokens,
      });
    expect(calls[0]?.toolCalls).toEqual([
      expect.objectContaining({ name: 'read_workspace_file', args: { path: 'plan.md' } }),
    ]);
    expect(calls[1]?.response).toBe('Three steps.');
    expect((calls[1]?.messages as { role: string }[]).map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
    const tools = records.filter((r) => r.type === 'tool_call');
    expect(tools).toEqual([
      expect.objectContaining({
        phase: 'review',
        name: 'read_workspace_file',
        args: { path: 'plan.md' },
        ok: true,
        result: PLAN,
      }),
    ]);
    expect(turn.usage).toEqual({
      calls: 2,
      inputTokens: 2 * SCRIPTED_USAGE.inputTokens,
      outputTokens: 2 * SCRIPTED_USAGE.outputTokens,
      costUsd: expect.any(Number) as number,
    });
  });

  it('stops tool use after the round limit and makes the model answer without tools', async () => {
    const job = await newJob();
    server.script([
      { times: MAX_TOOL_ROUNDS, reply: { functionCall: { name: 'list_workspace_files', args: {} } } },
      { reply: { text: 'Here is what I found so far.' } },
    ]);
    const turn = await send(job.id, 'Look around');
    expect(server.requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
    const limitNote = `You have used tools in ${MAX_TOOL_ROUNDS} rounds, the limit of one turn: do not call tools now.`;
    expect(body(MAX_TOOL_ROUNDS - 1).systemInstruction?.parts[0]?.text).not.toContain(limitNote);
    expect(body(MAX_TOOL_ROUNDS).systemInstruction?.parts[0]?.text).toContain(limitNote);
    // Every earlier call is answered, so the last request is a valid function-calling conversation.
    expect(toolResults(MAX_TOOL_ROUNDS)).toHaveLength(1);
    expect(turn.tools).toHaveLength(MAX_TOOL_ROUNDS);
    expect(turn.reply).toBe('Here is what I found so far.');
  });

  it('does not run tools the model still calls after the round limit, and says it found no answer', async () => {
    const job = await newJob();
    server.script([
      { times: MAX_TOOL_ROUNDS + 1, reply: { functionCall: { name: 'list_workspace_files', args: {} } } },
    ]);
    const turn = await send(job.id, 'Look around forever');
    expect(server.requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
    expect(turn.tools).toHaveLength(MAX_TOOL_ROUNDS);
    expect(auditRecords(job.id).filter((r) => r.type === 'tool_call')).toHaveLength(MAX_TOOL_ROUNDS);
    expect(turn.reply).toMatch(/without reaching an answer/);
    expect((await readChat(store, job.id)).at(-1)).toMatchObject({ kind: 'assistant', text: turn.reply });
  });

  it('skips malformed chat.jsonl lines with a warning and goes on', async () => {
    const job = await newJob();
    const chatFile = join(store.jobDir(job.id), 'chat.jsonl');
    appendFileSync(
      chatFile,
      `${JSON.stringify({ type: 'user', at: '2026-02-01T08:00:00Z', text: 'An earlier question' })}\n`,
    );
    appendFileSync(chatFile, 'not json at all {\n');
    appendFileSync(chatFile, `${JSON.stringify({ type: 'assistant', at: '2026-02-01T08:00:01Z' })}\n`);
    appendFileSync(
      chatFile,
      `${JSON.stringify({ type: 'assistant', at: '2026-02-01T08:00:02Z', text: 'An earlier answer', tools: [] })}\n`,
    );
    const logger = recordingLogger();
    expect(await readChat(store, job.id, { logger })).toEqual([
      { kind: 'user', at: '2026-02-01T08:00:00Z', text: 'An earlier question' },
      { kind: 'assistant', at: '2026-02-01T08:00:02Z', text: 'An earlier answer', tools: [] },
    ]);
    expect(logger.warnings.map((w) => w.fields?.line)).toEqual([2, 3]);
    script([], 'Still here.');
    const turn = await send(job.id, 'Next question', {}, { logger });
    expect(turn.reply).toBe('Still here.');
    expect(body(0).contents.map((c) => c.parts[0]?.text)).toEqual([
      'An earlier question',
      'An earlier answer',
      'Next question',
    ]);
  });

  it('surfaces a model error as an AgentError and keeps the message in chat.jsonl', async () => {
    const job = await newJob();
    server.script([{ reply: { error: { status: 500, message: 'the model backend broke' } } }]);
    const error: unknown = await send(job.id, 'Is step 3 safe?').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).message).toMatch(/the model backend broke/);
    const chat = await readChat(store, job.id);
    expect(chat).toEqual([{ kind: 'user', at: expect.any(String) as string, text: 'Is step 3 safe?' }]);
    expect(auditRecords(job.id).filter((r) => r.type === 'error')).toEqual([
      expect.objectContaining({ node: 'review_chat', code: (error as AgentError).code }),
    ]);
  });

  it('refuses an empty message and an unknown job before asking the model', async () => {
    const job = await newJob();
    await expect(send(job.id, '   ')).rejects.toThrow(/message is empty/);
    await expect(send('job_0000000000000000', 'hello')).rejects.toThrow(/no job job_0000000000000000/);
    expect(server.requests).toHaveLength(0);
  });
});
