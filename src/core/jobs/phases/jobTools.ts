/**
 * The tools of a job's agent, by phase: read-only database tools in both, the plan files in the
 * strategic phase, SQL that may write (held for approval) and todo status in the tactical phase, and the
 * calls that end a phase. One table is the source of the model's tool list, the argument checks and
 * the generated tools/*.md.
 */
import { z } from 'zod';
import type { ToolSpec } from '../../llm/provider';
import { TOP_ORDERS } from '../../dba/topQueries';
import { TODO_STATUSES } from '../todos';

export type Phase = 'strategic' | 'tactical';

const sqlArg = z.string().min(1).max(100_000);
const tableArg = z.string().min(1).max(200).describe('table name, "schema.name" or "name"');
const summaryArg = z.string().min(1).max(4000);

const todoItem = z.strictObject({
  id: z.string().min(1).max(64).describe('short id such as t1 or archive-orders'),
  title: z.string().min(1).max(300),
  sql: z.string().max(100_000).optional().describe('the SQL the todo will run, when known'),
  depends_on: z.array(z.string()).optional().describe('ids of todos that must be done first'),
});

export const TOOL_ARGS = {
  list_tables: z.strictObject({}),
  describe_table: z.strictObject({ table: tableArg }),
  find_tables: z.strictObject({
    words: z.string().min(1).max(500).describe('a few words: what the tables hold, column names, values'),
  }),
  sample_rows: z.strictObject({
    table: tableArg,
    limit: z.number().int().min(1).max(20).optional().describe('rows, at most 20 (default 5)'),
  }),
  count_rows: z.strictObject({
    table: tableArg,
    where: z.string().max(10_000).optional().describe('a WHERE condition without the keyword'),
  }),
  run_read_sql: z.strictObject({
    sql: sqlArg.describe('one read (SELECT / VALUES / TABLE / SHOW / EXPLAIN without ANALYZE)'),
  }),
  explain_sql: z.strictObject({ sql: sqlArg.describe('one SELECT, INSERT, UPDATE, DELETE or MERGE, without EXPLAIN') }),
  db_health: z.strictObject({
    checks: z.array(z.string().max(40)).max(20).optional().describe('only these check ids (default: all)'),
  }),
  top_queries: z.strictObject({
    order: z.enum(TOP_ORDERS).optional().describe('total (default), mean, calls, rows or io'),
    limit: z.number().int().min(1).max(50).optional().describe('statements (default 10)'),
  }),
  advise_indexes: z.strictObject({
    sql: z.string().max(100_000).optional().describe('one SELECT to advise on'),
    top: z.number().int().min(1).max(50).optional().describe('or: the N heaviest recorded statements'),
  }),
  write_workspace: z.strictObject({ content: z.string().min(1).max(200_000).describe('the whole new workspace.md') }),
  write_plan: z.strictObject({ content: z.string().min(1).max(200_000).describe('the whole new plan.md') }),
  write_todos: z.strictObject({ todos: z.array(todoItem).max(200) }),
  plan_ready: z.strictObject({ summary: summaryArg.describe('one line: what the plan does') }),
  run_sql: z.strictObject({
    sql: sqlArg.describe('one statement; a write waits for a person'),
    todo_id: z.string().max(64).optional(),
  }),
  update_todo: z.strictObject({
    id: z.string().min(1).max(64),
    status: z.enum(TODO_STATUSES),
    note: z.string().max(2000).optional(),
  }),
  finish_phase: z.strictObject({ summary: summaryArg.describe('what this tactical phase did') }),
  job_complete: z.strictObject({ summary: summaryArg.describe('what the job achieved') }),
  job_failed: z.strictObject({ reason: summaryArg.describe('why the task cannot be done') }),
} as const;

export type ToolName = keyof typeof TOOL_ARGS;
export type ToolArgs<N extends ToolName> = z.infer<(typeof TOOL_ARGS)[N]>;

interface ToolInfo {
  description: string;
  phases: readonly Phase[];
  /** What a reader of tools/*.md should know beyond the description: limits and safety. */
  notes: string;
}

const BOTH: readonly Phase[] = ['strategic', 'tactical'];
const READ_NOTE =
  'Runs READ ONLY with statement and lock timeouts and a row cap; the parser refuses anything that is not a read. Rows come back marked as untrusted data.';

export const TOOLS: Readonly<Record<ToolName, ToolInfo>> = {
  list_tables: {
    description: 'List the tables and views of the database with row estimates.',
    phases: BOTH,
    notes: 'From the schema snapshot (catalog), no data read.',
  },
  describe_table: {
    description: 'Columns, keys, foreign keys (both directions), indexes and triggers of one table.',
    phases: BOTH,
    notes: 'From the schema snapshot (catalog), no data read.',
  },
  find_tables: {
    description:
      'The tables whose names, columns, comments or known values best match a few words, best first (at most 10), one line each.',
    phases: BOTH,
    notes:
      'From the schema snapshot (catalog and planner statistics), no data read; families of same-column tables are one line.',
  },
  sample_rows: { description: 'A few rows of a table (at most 20).', phases: BOTH, notes: READ_NOTE },
  count_rows: {
    description: 'Count the rows of a table, optionally with a WHERE condition.',
    phases: BOTH,
    notes: READ_NOTE,
  },
  run_read_sql: {
    description: 'Run one read-only SQL statement and get its rows (capped).',
    phases: BOTH,
    notes: READ_NOTE,
  },
  explain_sql: {
    description: "The planner's plan of a statement (EXPLAIN without ANALYZE): nothing is executed.",
    phases: BOTH,
    notes: 'Inside a READ ONLY transaction; statements calling functions with side effects are refused.',
  },
  db_health: {
    description:
      'What a DBA checks first: invalid/unused/duplicate indexes, bloat, vacuum and analyze age, wraparound, sequences near max, long and idle-in-transaction sessions, connections, replication slots, FKs without an index, cache hits; each finding with evidence and a fix as SQL.',
    phases: BOTH,
    notes:
      'Read-only catalog queries, each with a statement timeout; a check that cannot run says why. A fix runs only as a todo through run_sql, held for a person.',
  },
  top_queries: {
    description:
      'The heaviest statements PostgreSQL recorded (pg_stat_statements), by total/mean time, calls, rows or I/O, with normalized text.',
    phases: BOTH,
    notes: 'Read-only; says how to set pg_stat_statements up when it is missing.',
  },
  advise_indexes: {
    description:
      'Index advice for one SELECT (sql) or the heaviest recorded statements (top): candidates measured with hypothetical indexes (hypopg) when available: cost before/after, size.',
    phases: BOTH,
    notes:
      'EXPLAIN with hypothetical indexes in a READ ONLY transaction; builds nothing. An index is built by a todo whose CREATE INDEX CONCURRENTLY goes through run_sql and waits for a person.',
  },
  write_workspace: {
    description:
      'Replace workspace.md, your long-term memory of the task (understanding, facts found, constraints, assumptions, open questions).',
    phases: ['strategic'],
    notes: "The person's ## Review Feedback section is kept by the system whatever you write.",
  },
  write_plan: {
    description: 'Replace plan.md, the strategic plan a person reviews before anything runs.',
    phases: ['strategic'],
    notes: 'Committed to the job history at each phase boundary, so reviews can show what changed.',
  },
  write_todos: {
    description: 'Replace todos.yaml: the ordered tasks of the next tactical phase.',
    phases: ['strategic'],
    notes:
      'Checked against the todos schema (unique ids, known dependencies, no cycles); a todo keeps its status under the same id.',
  },
  plan_ready: {
    description:
      "End the strategic phase: the plan files are written. In an interactive job the plan then waits for the person's review.",
    phases: ['strategic'],
    notes: 'Nothing runs before the person approves the plan (unless review is switched off).',
  },
  run_sql: {
    description:
      'Run one SQL statement of a todo. A read runs at once; a write is held with its exact impact until a person approves or rejects it, and you get the outcome then.',
    phases: ['tactical'],
    notes:
      'The safety path of every write: parse and classify, impact preview in a rolled-back transaction, an approval ticket bound to the exact SQL, execution in one transaction compared with the preview, an undo script. Nothing the model says can approve a write.',
  },
  update_todo: {
    description: 'Set the status of a todo (pending, in_progress, done, skipped, failed).',
    phases: ['tactical'],
    notes: 'A todo marked done is committed to the job history.',
  },
  finish_phase: {
    description: 'End this tactical phase; the strategic phase then re-plans from what happened.',
    phases: ['tactical'],
    notes: '',
  },
  job_complete: { description: 'The whole task is done: end the job with a summary.', phases: BOTH, notes: '' },
  job_failed: {
    description: 'The task cannot be done: end the job with the reason.',
    phases: BOTH,
    notes: 'The job is marked failed; its files and history stay for the review chat.',
  },
};

const TOOL_NAMES = Object.keys(TOOLS) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as string[]).includes(name);
}

function parameters(name: ToolName): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(TOOL_ARGS[name], { io: 'input' }) as Record<string, unknown>;
  return schema;
}

const specCache = new Map<Phase, ToolSpec[]>();

/** The tool list the model is given in a phase. */
export function toolsFor(phase: Phase): ToolSpec[] {
  let specs = specCache.get(phase);
  if (!specs) {
    specs = TOOL_NAMES.filter((name) => TOOLS[name].phases.includes(phase)).map((name) => ({
      name,
      description: TOOLS[name].description,
      parameters: parameters(name),
    }));
    specCache.set(phase, specs);
  }
  return specs;
}

/** tools/<name>.md: what the agent could do, readable by the person reviewing the job. */
export function toolDocs(): { file: string; text: string }[] {
  return TOOL_NAMES.map((name) => {
    const info = TOOLS[name];
    const schema = parameters(name);
    const props = (schema.properties ?? {}) as Record<string, { type?: string; description?: string }>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const rows = Object.entries(props).map(
      ([arg, p]) =>
        `| \`${arg}\` | ${p.type ?? 'object'} | ${required.has(arg) ? 'yes' : 'no'} | ${p.description ?? ''} |`,
    );
    const text = [
      `# ${name}`,
      '',
      info.description,
      '',
      `**Phases:** ${info.phases.join(', ')}`,
      '',
      ...(rows.length > 0
        ? ['| argument | type | required | meaning |', '|---|---|---|---|', ...rows, '']
        : ['No arguments.', '']),
      ...(info.notes ? [`**Safety and limits:** ${info.notes}`, ''] : []),
    ].join('\n');
    return { file: `tools/${name}.md`, text };
  });
}
