/**
 * Execute as job: the session's plan becomes a job (plan.md = IMPL_PLAN.md, todos.yaml = the plan's tasks
 * with their SQL and dependencies) waiting at its plan review, with the person who chose the option and when
 * recorded in workspace.md and audit.jsonl.
 *
 * Why at the review and not ready to run: the person chose an option from its summary; the tasks and their
 * exact SQL were written afterwards by a model, and nobody has seen those files yet. A job's plan approval is
 * bound to the exact plan.md + todos.yaml a person saw (SPEC §5.3), so it stays a person's act in the job
 * review. Either way, every write of the job still waits for its own ticket.
 */
import { AgentError } from '../platform/errors';
import type { JobOutcome } from '../jobs/jobOutcome';
import type { JobRunner } from '../jobs/jobRunner';
import type { Todo } from '../jobs/todos';
import type { CollabStore } from './sessionStore';
import type { SessionState } from './sessionTypes';
import { readSessionView } from './sessionView';

/**
 * The session's model calls, as the job's strategic model calls (node collab_<node>): the job's usage
 * then counts what its planning cost, and the review chat's debug tools can read the discussion.
 */
async function sessionModelCalls(store: CollabStore, id: string): Promise<Record<string, unknown>[]> {
  const text = await store.readText(id, 'audit.jsonl');
  const records: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      // A torn last line (a write cut short) is not a record.
      continue;
    }
    if (record.type !== 'model_call') continue;
    records.push({ ...record, node: `collab_${String(record.node)}`, phase: 'strategic', sessionId: id });
  }
  return records;
}

export async function executeAsJob(
  store: CollabStore,
  runner: JobRunner,
  id: string,
  by: string,
  now: () => Date = () => new Date(),
): Promise<{ state: SessionState; outcome: JobOutcome }> {
  const release = await store.lock(id, 'execute as job');
  try {
    return await executeLocked(store, runner, id, by, now);
  } finally {
    await release();
  }
}

async function executeLocked(
  store: CollabStore,
  runner: JobRunner,
  id: string,
  by: string,
  now: () => Date,
): Promise<{ state: SessionState; outcome: JobOutcome }> {
  const view = await readSessionView(store, id);
  const { state, plan, implPlan } = view;
  if (state.phase === 'executed')
    throw new AgentError(
      'BAD_INPUT',
      `Session ${id} was already executed as job ${state.jobId ?? '?'}.`,
      `Open it with pg-agent job show ${state.jobId ?? '<id>'}.`,
    );
  if (state.phase !== 'planned' || !plan || implPlan === null) {
    throw new AgentError(
      'BAD_INPUT',
      `Session ${id} has no plan yet (it is ${state.phase}).`,
      `Choose an option first: pg-agent plan decide ${id} --option N.`,
    );
  }
  const todos: Todo[] = plan.tasks.map((t) => ({
    id: t.id,
    title: t.title,
    status: 'pending',
    ...(t.depends_on.length > 0 ? { depends_on: t.depends_on } : {}),
    ...(t.sql?.trim() ? { sql: t.sql.trim() } : {}),
  }));
  const m = plan._metadata;
  const outcome = await runner.createAtReview({
    task: `${state.task}${state.direction ? `\n\nDirection: ${state.direction}` : ''}`,
    title: plan.title,
    plan: implPlan,
    todos,
    origin: `collaborative planning session ${id}: option ${m.option} "${m.option_name}" chosen by ${m.chosen_by} at ${m.chosen_at}.\nExecuted as a job by ${by}. The plan waits for your review; every write still needs its own approval.`,
    audit: [
      {
        type: 'plan_origin',
        source: 'collaborative-discussion',
        sessionId: id,
        option: m.option,
        optionName: m.option_name,
        chosenBy: m.chosen_by,
        chosenAt: m.chosen_at,
        executedBy: by,
      },
      ...(await sessionModelCalls(store, id)),
    ],
  });
  const at = now().toISOString();
  state.decisions.push({ kind: 'execute', by, at, round: state.currentRound, jobId: outcome.job.id });
  state.jobId = outcome.job.id;
  state.phase = 'executed';
  state.updatedAt = at;
  await store.saveState(state);
  await store.audit(id, { type: 'decision', kind: 'execute', by, jobId: outcome.job.id });
  return { state, outcome };
}
