/**
 * A password in an Ask question: the run keeps (checkpoints, audit) and sends the model its verifier only.
 * A password in a job, through the real CLI processes with the scripted model: typed by the person in the task,
 * written by the model in its plan, a todo's SQL and a run_sql call. Everything the job keeps (job files,
 * checkpoints, audit, tickets) holds verifiers, never the typed text; the held write runs as its verifier, and the
 * role's stored verifier stands for the password the model wrote.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scramVerifier, verifierParts } from '../../../src/core/sql/secrets/scramVerifier';
import { runPgAgent } from '../../support/cliHarness';
import { call, inStrategic, inTactical } from '../../support/jobScript';
import { queryValue } from '../../support/scratchDatabase';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { useScriptedWorkspace, useShopScratch } from '../../support/shopDatabase';

const ROLE = `jobpw_role_${process.pid}`;
const TASK_SECRET = 'jobpw-Task-Secret-1';
const MODEL_SECRET = 'jobpw-Model-Secret-2';
const PLAN_SECRET = 'jobpw-Plan-Secret-3';
const CREATE = `CREATE ROLE ${ROLE} LOGIN PASSWORD '${MODEL_SECRET}'`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe.runIf(postgresAvailable)('passwords a person or a model types are kept as verifiers', () => {
  let scratch: ScratchDatabase;
  let server: ScriptedModelServer;
  let workspace: string;
  const shop = useShopScratch();
  beforeAll(() => void (scratch = shop.scratch));
  const rig = useScriptedWorkspace('jobpw');
  beforeEach(() => void ({ server, workspace } = rig));

  const job = (argv: string[]) =>
    runPgAgent(['job', '--db', scratch.url, '--workspace', workspace, ...argv], {
      cwd: workspace,
      env: { USER: 'tester', GEMINI_API_KEY: 'test-key', PGAGENT_GEMINI_BASE_URL: server.url },
    });

  it('from the task, the plan, a todo and run_sql to the role that logs in with it', async () => {
    server.script([
      inStrategic({
        functionCalls: [
          call('write_plan', { content: `# Plan\n\n1. Create the role with password '${PLAN_SECRET}'.\n` }),
          call('write_todos', { todos: [{ id: 't1', title: 'Create the role', sql: CREATE }] }),
        ],
      }),
      inStrategic({ functionCall: call('plan_ready', { summary: 'create the role' }) }),
    ]);
    const created = await job(['new', '--json', '--', `Create a login role with password '${TASK_SECRET}'`]);
    expect(created.code, created.stderr).toBe(0);
    const id = (JSON.parse(created.stdout) as { job: { id: string } }).job.id;

    server.script([inTactical({ functionCall: call('run_sql', { sql: CREATE, todo_id: 't1' }) })]);
    const held = await job(['approve', id, '--no-input', '--json']);
    expect(held.code, held.stderr).toBe(3);
    const out = JSON.parse(held.stdout) as { stop: { sql: string; ticketId: string } };
    expect(out.stop.sql).toMatch(new RegExp(`^CREATE ROLE ${ROLE} LOGIN PASSWORD 'SCRAM-SHA-256\\$`));

    // The model was sent the task as a verifier, never as typed.
    expect(server.requests.some((r) => r.text.includes('SCRAM-SHA-256$'))).toBe(true);
    for (const r of server.requests) expect(r.text).not.toContain(TASK_SECRET);

    const kept = filesUnder(join(workspace, '.pgagent'));
    expect(kept.some((f) => f.includes('checkpoints'))).toBe(true);
    expect(kept.some((f) => f.endsWith('audit.jsonl'))).toBe(true);
    for (const file of kept) {
      const text = readFileSync(file).toString('latin1');
      for (const secret of [TASK_SECRET, MODEL_SECRET, PLAN_SECRET]) expect(text, file).not.toContain(secret);
    }

    const approved = await runPgAgent(['approvals', 'approve', out.stop.ticketId, '--workspace', workspace], {
      cwd: workspace,
      env: { USER: 'tester' },
    });
    expect(approved.code, approved.stderr).toBe(0);
    server.script([inTactical({ functionCall: call('finish_phase', { summary: 'done' }) })]);
    const done = await job(['continue', id, '--no-input', '--json']);
    expect(done.stderr).not.toContain(MODEL_SECRET);
    try {
      const stored = String(
        await queryValue(scratch.url, `SELECT rolpassword FROM pg_authid WHERE rolname = '${ROLE}'`),
      );
      const parts = verifierParts(stored);
      expect(parts).toBeDefined();
      expect(scramVerifier(MODEL_SECRET, parts)).toBe(stored);
      expect(scramVerifier('another password', parts)).not.toBe(stored);
    } finally {
      await queryValue(scratch.url, `DROP ROLE IF EXISTS ${ROLE}`);
    }
  });

  it('an Ask question keeps and sends only the verifier of a password typed in it', async () => {
    const ASK_SECRET = 'askpw-Question-Secret-4';
    server.script([
      { reply: { json: { operation: 'read', tables: ['customers'], confidence: 0.9 } } },
      { reply: { json: { sql: 'SELECT count(*) FROM customers', operation: 'read', explanation: 'a count' } } },
      { reply: { text: 'There are some customers.' } },
    ]);
    const asked = await runPgAgent(
      [
        'ask',
        '--db',
        scratch.url,
        '--workspace',
        workspace,
        '--json',
        `how many customers? my password is '${ASK_SECRET}'`,
      ],
      { cwd: workspace, env: { USER: 'tester', GEMINI_API_KEY: 'test-key', PGAGENT_GEMINI_BASE_URL: server.url } },
    );
    expect(asked.code, asked.stderr).toBe(0);
    expect(server.requests.some((r) => r.text.includes('SCRAM-SHA-256$'))).toBe(true);
    for (const r of server.requests) expect(r.text).not.toContain(ASK_SECRET);
    const kept = filesUnder(join(workspace, '.pgagent'));
    expect(kept.length).toBeGreaterThan(0);
    for (const file of kept) expect(readFileSync(file).toString('latin1'), file).not.toContain(ASK_SECRET);
  });
});
