/**
 * The agent's tools on its own job files: workspace.md (long-term memory), plan.md, todos.yaml. The
 * person's "## Review Feedback" in workspace.md is theirs: the agent rewriting the file cannot drop it.
 */
import { AgentError } from '../../platform/errors';
import type { JobStore } from '../jobStore';
import type { Todo, TodoStatus } from '../todos';
import { TODO_STATUSES, parseTodos, renderTodos } from '../todos';

const FEEDBACK_HEADING = '## Review Feedback';

/** The `## Review Feedback` section of a workspace.md (heading to the next level-1/2 heading), or ''. */
export function feedbackSection(doc: string): string {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => line.trimEnd() === FEEDBACK_HEADING);
  if (start === -1) return '';
  const after = lines.slice(start + 1).findIndex((line) => /^#{1,2} /.test(line));
  const end = after === -1 ? lines.length : start + 1 + after;
  return lines.slice(start, end).join('\n').trimEnd();
}

function withoutFeedback(doc: string): string {
  const section = feedbackSection(doc);
  return section === '' ? doc : doc.replace(section, '');
}

/** The agent's new workspace.md with the person's feedback section kept as it was, at the end. */
export function mergeWorkspace(previous: string, proposed: string): string {
  const kept = feedbackSection(previous);
  const body = withoutFeedback(proposed)
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
  return `${body}\n${kept === '' ? '' : `\n${kept}\n`}`;
}

export async function writeWorkspace(store: JobStore, jobId: string, content: string): Promise<string> {
  if (content.trim() === '') throw new AgentError('BAD_INPUT', 'workspace.md cannot be empty.');
  const previous = await store.readFile(jobId, 'workspace.md');
  await store.writeFile(jobId, 'workspace.md', mergeWorkspace(previous, content));
  return 'workspace.md written (the Review Feedback section is kept by the system).';
}

export async function writePlan(store: JobStore, jobId: string, content: string): Promise<string> {
  if (content.trim() === '') throw new AgentError('BAD_INPUT', 'plan.md cannot be empty.');
  await store.writeFile(jobId, 'plan.md', `${content.trimEnd()}\n`);
  return 'plan.md written.';
}

export interface TodoInput {
  id: string;
  title: string;
  sql?: string | undefined;
  depends_on?: string[] | undefined;
  status?: TodoStatus | undefined;
}

/** Replaces todos.yaml; a todo keeps the status it had under the same id unless one is given. */
export async function writeTodos(store: JobStore, jobId: string, todos: readonly TodoInput[]): Promise<string> {
  const previous = await readTodosIfAny(store, jobId);
  const statusOf = new Map(previous.map((t) => [t.id, t.status]));
  const next: Todo[] = todos.map((t) => ({
    id: t.id,
    title: t.title,
    status: t.status ?? statusOf.get(t.id) ?? 'pending',
    ...(t.sql?.trim() ? { sql: t.sql.trim() } : {}),
    ...(t.depends_on && t.depends_on.length > 0 ? { depends_on: t.depends_on } : {}),
  }));
  await store.writeFile(jobId, 'todos.yaml', renderTodos(next));
  return `todos.yaml written: ${next.length} todo(s).`;
}

export async function readTodos(store: JobStore, jobId: string): Promise<Todo[]> {
  return parseTodos(await store.readFile(jobId, 'todos.yaml'));
}

/**
 * The todos, or none when the job has no todos.yaml yet. A todos.yaml that does not parse is an error that
 * names its line (never "no todos": that would end a phase as if the work were done, or overwrite the file).
 */
export async function readTodosIfAny(store: JobStore, jobId: string): Promise<Todo[]> {
  if (!(await store.hasFile(jobId, 'todos.yaml'))) return [];
  return readTodos(store, jobId);
}

/** Sets one todo's status; returns the todo as it now is. */
export async function updateTodo(store: JobStore, jobId: string, id: string, status: string): Promise<Todo> {
  if (!(TODO_STATUSES as readonly string[]).includes(status)) {
    throw new AgentError('BAD_INPUT', `"${status}" is not a todo status.`, `Use one of ${TODO_STATUSES.join(', ')}.`);
  }
  const todos = await readTodos(store, jobId);
  const todo = todos.find((t) => t.id === id);
  if (!todo)
    throw new AgentError(
      'BAD_INPUT',
      `There is no todo "${id}".`,
      `The todos are: ${todos.map((t) => t.id).join(', ') || 'none'}.`,
    );
  todo.status = status as TodoStatus;
  await store.writeFile(jobId, 'todos.yaml', renderTodos(todos));
  return todo;
}
