/**
 * Plan tickets (SPEC §5.3): a job's plan is approved like a write, through a ticket bound to the hash of
 * plan.md + todos.yaml of that review cycle and the job id, so approving what you saw can never approve a
 * plan that changed since, and a teammate can approve it from anywhere the tickets are.
 */
import type { ImpactReport } from '../../shared/impactReport';
import type { Ticket } from './ticket';
import { planText, sqlHash } from './ticket';
import type { TicketStore } from './ticketStore';

/** A plan changes no rows by itself (its writes get their own tickets): the lowest risk, nothing previewed. */
export function planImpact(): ImpactReport {
  return {
    statements: [],
    estimatedRows: null,
    exactRows: null,
    tables: [],
    risk: 'LOW',
    requiresApproval: true,
    wouldFail: null,
    previewMs: 0,
    warnings: ['A plan ticket: each write of the plan is held for its own approval when it runs.'],
    foreignKeyActions: [],
    triggers: [],
    previewed: false,
    locks: [],
    rewrites: [],
    dependents: [],
    lint: [],
    transactional: true,
    reach: [],
  };
}

export interface PlanFiles {
  jobId: string;
  planMd: string;
  todosYaml: string;
}

export function planHash(files: PlanFiles): string {
  return sqlHash(planText(files.jobId, files.planMd, files.todosYaml));
}

export function createPlanTicket(
  store: TicketStore,
  input: PlanFiles & { cycle: number; title: string; connection: string; requestedBy: string },
): Promise<Ticket> {
  return store.create({
    kind: 'plan',
    sql: planText(input.jobId, input.planMd, input.todosYaml),
    connection: input.connection,
    impact: planImpact(),
    createdBy: input.requestedBy,
    plan: { jobId: input.jobId, cycle: input.cycle, title: input.title },
  });
}
