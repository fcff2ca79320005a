/**
 * plan.json (seed phase 5, for a database): 2–7 tasks with their objects, SQL, dependencies and
 * verification, validated in code — ids unique and shaped like todo ids, dependencies known and without a
 * cycle, every SQL parsed by PostgreSQL's grammar — both when the model writes it and when it is read back.
 */
import { z } from 'zod';
import { findCycle } from '../jobs/todos';
import { classifySql } from '../sql/classify';
import { isParserLoaded } from '../sql/parse';

const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

const taskSchema = z.object({
  id: z.string().regex(TASK_ID, 'must be letters, digits, "_", "-" or "." (starting with a letter or digit)'),
  title: z.string().min(1),
  description: z.string(),
  scope: z.string(),
  objects: z.array(z.string()),
  sql: z.string().nullable().optional(),
  depends_on: z.array(z.string()),
  execution_group: z.number().int().min(1),
  verification: z.string().min(1),
});
export type PlanTask = z.infer<typeof taskSchema>;

const planBody = {
  title: z.string().min(1),
  overview: z.string(),
  rationale: z.string(),
  complexity: z.enum(['low', 'medium', 'high']),
  tasks: z.array(taskSchema).min(2).max(7),
  acceptanceCriteria: z.array(z.string()).min(1),
  risks: z.array(z.object({ risk: z.string(), mitigation: z.string() })),
  prerequisites: z.array(z.string()),
};

type PlanLike = { tasks: PlanTask[] };

/** Dependencies and SQL, checked beyond the shape; the messages go back to the model in the repair. */
function checkTasks(plan: PlanLike, ctx: z.RefinementCtx): void {
  const ids = new Map<string, number>();
  plan.tasks.forEach((task, i) => {
    if (ids.has(task.id))
      ctx.addIssue({ code: 'custom', path: ['tasks', i, 'id'], message: `duplicate task id "${task.id}"` });
    ids.set(task.id, i);
  });
  plan.tasks.forEach((task, i) => {
    task.depends_on.forEach((dep, j) => {
      if (!ids.has(dep))
        ctx.addIssue({
          code: 'custom',
          path: ['tasks', i, 'depends_on', j],
          message: `"${task.id}" depends on unknown task "${dep}"`,
        });
      if (dep === task.id)
        ctx.addIssue({
          code: 'custom',
          path: ['tasks', i, 'depends_on', j],
          message: `"${task.id}" depends on itself`,
        });
    });
  });
  const cycle = findCycle(
    plan.tasks.map((t) => ({ id: t.id, title: t.title, status: 'pending' as const, depends_on: t.depends_on })),
  );
  if (cycle) ctx.addIssue({ code: 'custom', path: ['tasks'], message: `dependency cycle: ${cycle.join(' -> ')}` });
  if (!isParserLoaded()) return;
  plan.tasks.forEach((task, i) => {
    if (!task.sql?.trim()) return;
    try {
      classifySql(task.sql);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        path: ['tasks', i, 'sql'],
        message: `the SQL of "${task.id}" does not parse: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  });
}

/** What the planning model returns. */
export const planOutputSchema = z.object(planBody).superRefine(checkTasks);
export type PlanOutput = z.infer<typeof planOutputSchema>;

/** plan.json as written: the model's plan plus where it came from. */
export const planJsonSchema = z
  .object({
    ...planBody,
    _metadata: z.strictObject({
      source: z.literal('collaborative-discussion'),
      session_id: z.string(),
      option: z.number().int().min(1),
      option_name: z.string(),
      chosen_by: z.string(),
      chosen_at: z.string(),
      generated_at: z.string(),
      models: z.array(z.string()),
    }),
  })
  .superRefine(checkTasks);
export type PlanJson = z.infer<typeof planJsonSchema>;
