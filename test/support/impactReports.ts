// An impact report as a preview makes it for one plain write that found nothing worth a word: a test names only
// the fields it is about (rows, tables, risk…) and gets the rest as the preview would leave them.
import type { ImpactReport } from '../../src/shared/impactReport';
import type { ImpactView } from '../../src/shared/protocol';

/** What a card or a job's view shows of an impact report (no statements, no requiresApproval). */
export function impactView(over: Partial<ImpactView> = {}): ImpactView {
  return {
    estimatedRows: 0,
    exactRows: 0,
    tables: [],
    risk: 'LOW',
    wouldFail: null,
    previewMs: 0,
    warnings: [],
    foreignKeyActions: [],
    triggers: [],
    previewed: true,
    locks: [],
    rewrites: [],
    dependents: [],
    lint: [],
    transactional: true,
    reach: [],
    ...over,
  };
}

/** The whole report, as a ticket stores it. */
export function impactReport(over: Partial<ImpactReport> = {}): ImpactReport {
  return { statements: [], requiresApproval: true, ...impactView(), ...over };
}

/** The fields `pg-agent impact --json` has always printed (SPEC §6); later ones (DDL's locks, lint…) come after. */
export const IMPACT_JSON_FIELDS = [
  'statements',
  'estimatedRows',
  'exactRows',
  'tables',
  'risk',
  'requiresApproval',
  'wouldFail',
  'previewMs',
  'warnings',
];
