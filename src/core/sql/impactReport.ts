/**
 * The impact of a write (SPEC §5.4, §6 `impact --json`): the planner's estimate, the exact per-table
 * effects of a preview run in BEGIN … ROLLBACK, the risk, and whether the preview failed.
 */

export type Risk = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';

export const RISK_ORDER: readonly Risk[] = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

/** How a table came to be touched: by the statement itself, by a foreign key action, or by a trigger. */
export type EffectVia = 'direct' | 'cascade' | 'trigger';

export interface TableEffect {
  schema: string;
  name: string;
  via: EffectVia;
  inserted: number;
  updated: number;
  deleted: number;
}

/** A foreign key whose ON DELETE/UPDATE action the statement sets off. */
export interface ForeignKeyActionFired {
  constraint: string;
  /** The referencing table, whose rows the action changes. */
  table: string;
  references: string;
  action: string;
}

export interface TriggerFired {
  table: string;
  name: string;
}

export interface ImpactReport {
  statements: string[];
  /** Rows the planner expects the write to touch (the ModifyTable's child estimate); null when unknown. */
  estimatedRows: number | null;
  /** Rows inserted + updated + deleted in all tables by the preview; null only when no preview could run. */
  exactRows: number | null;
  tables: TableEffect[];
  risk: Risk;
  requiresApproval: boolean;
  /** The preview's failure, PostgreSQL's SQLSTATE and message: the write would fail as written. */
  wouldFail: null | { code: string; message: string };
  previewMs: number;
  warnings: string[];
  /** Beyond SPEC §6's shape (additive): what the preview saw fire. */
  foreignKeyActions: ForeignKeyActionFired[];
  triggers: TriggerFired[];
}
