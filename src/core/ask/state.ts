/** The state of one `ask` run: what each node reads and writes, checkpointed between steps. */
import type { ApprovalDecision } from '../approvals/approvalPath';
import { Annotation } from '@langchain/langgraph';
import type { ErrorInfo } from '../../shared/errorCodes';
import type { Classification } from '../sql/classification';
import type { ImpactReport } from '../../shared/impactReport';
import type { TableEffect } from '../../shared/impactReport';
import type { ReadResult } from '../sql/runRead';

export interface Intent {
  operation: 'read' | 'write' | 'unknown';
  tables: string[];
  /** 0..1; 0 for the static fallback. */
  confidence: number;
  /** 'model', or 'fallback' when the model could not be asked. */
  source: 'model' | 'fallback';
}

export interface ModelClaim {
  operation: 'read' | 'write';
  explanation: string;
}

export interface ValidationProblem {
  sqlState: string;
  message: string;
  position?: number;
  hint?: string;
}

/** The one decision type of every approval (see approvals/approvalPath.ts). */
export type { ApprovalDecision };

export interface WriteExecution {
  rows: number;
  tables: TableEffect[];
  undoSql: string;
  undoWarnings: string[];
  /** Where the undo script was written (before COMMIT). */
  undoFile: string;
  elapsedMs: number;
}

export interface Usage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; null once any call had no known price. */
  costUsd: number | null;
}

export const NO_USAGE: Usage = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    calls: a.calls + b.calls,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd === null || b.costUsd === null ? null : a.costUsd + b.costUsd,
  };
}

export const AskState = Annotation.Root({
  /** The person's question, in their words. */
  question: Annotation<string>,
  /** What the question seems to ask for (model output, or a static guess when the model is unavailable). */
  intent: Annotation<Intent | undefined>,
  /** The schema the model is shown: the rendered text and the tables in it, best first. */
  schemaContext: Annotation<{ text: string; tables: string[] } | undefined>,
  /** The SQL under consideration (the model's latest attempt). */
  sql: Annotation<string | undefined>,
  /** What the model said its SQL does; informative only, never used to route. */
  modelClaim: Annotation<ModelClaim | undefined>,
  /** What the parser says the SQL does; this, not the claim, decides read / write / refuse. */
  classification: Annotation<Classification | undefined>,
  /** PostgreSQL's (or the parser's) objection to the current SQL; cleared by a repair. */
  validationError: Annotation<ValidationProblem | undefined>,
  /** How many repairs were made so far (at most 2). */
  repairAttempts: Annotation<number>({ reducer: (_old, next) => next, default: () => 0 }),
  /** The rows of a read. */
  result: Annotation<ReadResult | undefined>,
  /** The impact preview of a write. */
  impact: Annotation<ImpactReport | undefined>,
  /** The approval ticket of the write. */
  ticketId: Annotation<string | undefined>,
  /** A person's decision, from the resume value only. */
  decision: Annotation<ApprovalDecision | undefined>,
  /** What an approved write did: rows changed and the undo script. */
  execution: Annotation<WriteExecution | undefined>,
  /** A short answer in words (optional; only when a model is available). */
  summary: Annotation<string | undefined>,
  /** Why the run stopped without an answer. */
  error: Annotation<ErrorInfo | undefined>,
  /** Tokens and cost of every model call of the run, summed. */
  usage: Annotation<Usage>({ reducer: addUsage, default: () => NO_USAGE }),
});

export type AskStateValue = typeof AskState.State;
export type AskUpdate = typeof AskState.Update;
