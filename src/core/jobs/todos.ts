/**
 * `todos.yaml` of a job (SPEC §4): the tasks of the next tactical phase. People edit this file during
 * review, so parse errors name the line and field, and rendering is stable so diffs stay small.
 */
import { isNode, LineCounter, parseDocument, stringify } from 'yaml';
import { z } from 'zod';
import { AgentError } from '../platform/errors';

export const TODO_STATUSES = ['pending', 'in_progress', 'done', 'skipped', 'failed'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

const todoSchema = z.strictObject({
  id: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_.-]*$/,
      'must be letters, digits, "_", "-" or "." (starting with a letter or digit)',
    ),
  title: z.string().min(1),
  status: z.enum(TODO_STATUSES),
  sql: z.string().optional(),
  depends_on: z.array(z.string()).optional(),
});

export const todoListSchema = z.array(todoSchema).superRefine((todos, ctx) => {
  const index = new Map<string, number>();
  todos.forEach((todo, i) => {
    const first = index.get(todo.id);
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [i, 'id'],
        message: `duplicate id "${todo.id}" (already used by todo ${first + 1})`,
      });
    } else {
      index.set(todo.id, i);
    }
  });
  todos.forEach((todo, i) => {
    (todo.depends_on ?? []).forEach((dep, j) => {
      if (!index.has(dep)) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'depends_on', j],
          message: `"${todo.id}" depends on unknown todo "${dep}"`,
        });
      }
    });
  });
  const cycle = findCycle(todos);
  if (cycle) {
    const at = index.get(cycle[0] ?? '') ?? 0;
    ctx.addIssue({ code: 'custom', path: [at, 'depends_on'], message: `dependency cycle: ${cycle.join(' -> ')}` });
  }
});

export type Todo = z.infer<typeof todoSchema>;

/** The ids of one dependency cycle (first id repeated at the end), or undefined when there is none. */
export function findCycle(todos: readonly Todo[]): string[] | undefined {
  const deps = new Map(todos.map((t) => [t.id, t.depends_on ?? []]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    const seen = state.get(id);
    if (seen === 'done') return undefined;
    if (seen === 'visiting') return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 'visiting');
    stack.push(id);
    for (const dep of deps.get(id) ?? []) {
      if (!deps.has(dep)) continue; // unknown ids are reported separately
      const found = visit(dep);
      if (found) return found;
    }
    stack.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const todo of todos) {
    const found = visit(todo.id);
    if (found) return found;
  }
  return undefined;
}

function invalid(message: string): AgentError {
  return new AgentError(
    'CONFIG_INVALID',
    `todos.yaml ${message}`,
    'Fix todos.yaml (a list of { id, title, status, sql?, depends_on? }) and save it again.',
  );
}

/** todos.yaml text to a checked list; errors read like "todos.yaml line 4, todo 2 field status: ...". */
export function parseTodos(text: string): Todo[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const yamlError = doc.errors[0];
  if (yamlError) {
    const line = lineCounter.linePos(yamlError.pos[0]).line;
    throw invalid(`line ${line}: ${yamlError.message.split('\n')[0] ?? 'invalid YAML'}`);
  }
  const raw: unknown = doc.contents === null ? [] : doc.toJS();
  const result = todoListSchema.safeParse(raw);
  if (result.success) return result.data;

  const issue = result.error.issues[0];
  const path = (issue?.path ?? []).filter((p): p is string | number => typeof p !== 'symbol');
  const node = doc.getIn(path, true) ?? doc.getIn(path.slice(0, -1), true);
  const where: string[] = [];
  if (isNode(node) && node.range) where.push(`line ${lineCounter.linePos(node.range[0]).line}`);
  const [todoIndex, field] = path;
  if (typeof todoIndex === 'number') where.push(`todo ${todoIndex + 1}`);
  if (typeof field === 'string') where.push(`field ${field}`);
  const prefix = where.length > 0 ? where.join(', ') : 'top level';
  throw invalid(`${prefix}: ${issue?.message ?? 'invalid'}`);
}

/** A stable YAML text: fixed key order, no line folding, multi-line SQL as a literal block. */
export function renderTodos(todos: readonly Todo[]): string {
  const result = todoListSchema.safeParse(todos);
  if (!result.success) throw invalid(`would be invalid: ${result.error.issues[0]?.message ?? 'unknown problem'}`);
  const checked = result.data;
  if (checked.length === 0) return '[]\n';
  const ordered = checked.map((t) => ({
    id: t.id,
    title: t.title,
    status: t.status,
    ...(t.depends_on !== undefined ? { depends_on: t.depends_on } : {}),
    ...(t.sql !== undefined ? { sql: t.sql } : {}),
  }));
  return stringify(ordered, { lineWidth: 0, blockQuote: 'literal' });
}
