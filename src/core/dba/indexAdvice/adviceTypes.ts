/** What `pg-agent indexes advise` reports (the `--json` shape, README "pg-agent indexes advise"). */

export interface AdviceQueryInput {
  sql: string;
  /** How often it runs (pg_stat_statements calls; 1 for a given query): the weight of its cost. */
  calls: number;
  source: 'given' | 'pg_stat_statements';
  queryid?: string;
}

export interface AdvisedQuery {
  id: number;
  sql: string;
  calls: number;
  source: AdviceQueryInput['source'];
  queryid?: string;
  /** Planner cost without and with the recommended indexes (hypothetical); null when not measured. */
  costBefore: number | null;
  costAfter: number | null;
  /** Why it was left out (not a read, cannot be planned, no table). */
  skipped?: string;
}

export interface IndexBenefit {
  query: number;
  costBefore: number;
  costAfter: number;
  /** The query's plan uses this index. */
  usesIndex: boolean;
}

export interface IndexRecommendation {
  /** The statement to approve: CREATE INDEX CONCURRENTLY … */
  sql: string;
  table: string;
  columns: string[];
  include: string[];
  reasons: string[];
  measured: boolean;
  /** hypopg's estimate of the index's size; null when not measured. */
  estimatedBytes: number | null;
  /** Calls-weighted planner cost saved over the queries it helps; null when not measured. */
  gain: number | null;
  /** gain as a share of those queries' weighted cost before it (0–1); null when not measured. */
  gainRatio: number | null;
  benefits: IndexBenefit[];
  /** Rough build time: the table read once plus a sort (an estimate, said so). */
  buildSecondsEstimate: number;
  tableBytes: number;
  score: number;
  /** Set when the recommendation was submitted through the SQL path: the held ticket. */
  ticket?: { id: string; risk: string; status: string };
}

export interface AdviceReport {
  measured: boolean;
  hypopg: 'installed' | 'available' | 'absent';
  /** Why it was not measured, and how to make it so. */
  note?: string;
  queries: AdvisedQuery[];
  recommendations: IndexRecommendation[];
  candidates: number;
  budgetBytes: number;
  minGain: number;
  /** EXPLAINs issued (the bench's count). */
  explains: number;
  elapsedMs: number;
}

export interface AdviceOptions {
  /** Space the recommended indexes may take together (default 1 GiB). */
  budgetBytes?: number;
  /** Smallest share of the helped queries' cost an index must save to be recommended (default 0.1). */
  minGain?: number;
  /** At most this many indexes (default 5). */
  maxIndexes?: number;
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
}
