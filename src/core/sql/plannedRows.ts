/** The rows the planner expects a data change to write, read from its `EXPLAIN (FORMAT JSON)` output. */

interface PlanNode {
  'Node Type'?: string;
  'Plan Rows'?: number;
  Plans?: PlanNode[];
}

/**
 * The sum of the row estimates of the children of the plan's ModifyTable nodes; null when the plan has
 * none (not a data change) or is not a plan. `queryPlan` is the `QUERY PLAN` value, as JSON text or parsed.
 */
export function plannedRowsOf(queryPlan: unknown): number | null {
  const plan = (typeof queryPlan === 'string' ? JSON.parse(queryPlan) : queryPlan) as { Plan?: PlanNode }[] | undefined;
  return plan?.[0]?.Plan ? modifyTableRows(plan[0].Plan) : null;
}

function modifyTableRows(node: PlanNode): number | null {
  let found: number | null = null;
  const visit = (n: PlanNode) => {
    if (n['Node Type'] === 'ModifyTable') {
      const child = n.Plans?.[0]?.['Plan Rows'];
      if (typeof child === 'number') found = (found ?? 0) + child;
    }
    for (const c of n.Plans ?? []) visit(c);
  };
  visit(node);
  return found;
}
