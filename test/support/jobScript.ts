// What the scripted model answers in a job's phases, shared by the job graph, CLI and E2E tests: which
// phase a request belongs to (by the tools it offers) and the usual archive-cancelled-orders plan turn.
import { expect } from 'vitest';
import type { RecordedRequest, ScriptedModelServer, Rule } from './scriptedModelServer';

export const ARCHIVE = "UPDATE orders SET status = 'archived' WHERE status = 'cancelled' AND id <= 10";
export const PLAN_V1 = '# Plan\n\n1. Archive all cancelled orders in one statement.\n';
export const PLAN_V2 =
  '# Plan\n\n1. Archive cancelled orders in batches of 10 ids.\n2. Check the count after each batch.\n';
export const FEEDBACK = 'Split the archive into batches of ten orders, and check the count after each batch.';

/** The function names a request offers the model (Gemini: body.tools[].functionDeclarations[].name). */
export function offeredTools(req: RecordedRequest): string[] {
  const body = req.body as { tools?: { functionDeclarations?: { name?: string }[] }[] } | undefined;
  return (body?.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []).map((f) => f.name ?? '');
}

export const strategic = (req: RecordedRequest) => offeredTools(req).includes('plan_ready');
export const tactical = (req: RecordedRequest) => offeredTools(req).includes('run_sql');
export const reviewChat = (req: RecordedRequest) => offeredTools(req).includes('draft_feedback');
export const call = (name: string, args: object = {}) => ({ name, args });
export const inStrategic = (reply: Rule['reply']): Rule => ({ match: strategic, reply });
export const inTactical = (reply: Rule['reply']): Rule => ({ match: tactical, reply });

/** A strategic turn writing workspace, `plan` and one todo running `todoSql`, then plan_ready. */
export function planTurn(plan: string, todoSql = ARCHIVE): Rule[] {
  return [
    inStrategic({
      functionCalls: [
        call('write_workspace', { content: '# Archive cancelled orders\n\n## Facts\n\n40 cancelled orders.\n' }),
        call('write_plan', { content: plan }),
        call('write_todos', { todos: [{ id: 't1', title: 'Archive the first cancelled orders', sql: todoSql }] }),
      ],
    }),
    inStrategic({ functionCall: call('plan_ready', { summary: 'archive cancelled orders' }) }),
  ];
}

/** A new job (`pg-agent job new --json`) planned with PLAN_V1 and stopped at its first plan review; its id. */
export async function newJobAtReview(
  server: ScriptedModelServer,
  job: (argv: string[]) => Promise<{ code: number; stdout: string; stderr: string }>,
): Promise<string> {
  server.script(planTurn(PLAN_V1));
  const run = await job(['new', '--json', '--', 'Archive cancelled orders']);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { job: { id: string } }).job.id;
}
