/**
 * The whole contract between the extension host and the review panel (webview). The host owns state
 * and pushes versioned snapshots (this file); the webview sends intents (panelMessages.ts), which the host parses with zod before
 * acting on them (a webview is untrusted input).
 */
import type { ErrorInfo } from './errorCodes';
import type { ImpactReport } from './impactReport';
import type { RelationKind } from './schema';

// ---- host → webview --------------------------------------------------------------------------

export type ConnectionState =
  | { status: 'none' }
  | { status: 'connecting'; label: string; kind: 'sample' | 'server' }
  | { status: 'connected'; label: string; kind: 'sample' | 'server'; database: string }
  | { status: 'failed'; label: string; kind: 'sample' | 'server'; error: ErrorInfo };

export interface TableSummary {
  schema: string;
  name: string;
  kind: RelationKind;
  rowEstimate: number | null;
  columnCount: number;
  comment: string | null;
}

/** Tables the side panel lists; the Schema view and Find Table… reach the others. */
export const PANEL_TABLES = 200;

export type SchemaState =
  | { status: 'idle' }
  | { status: 'loading' }
  /** `tables`: the first tables in schema and name order, at most PANEL_TABLES of them; `total`: every table. */
  | { status: 'ready'; tables: TableSummary[]; total: number }
  | { status: 'failed'; error: ErrorInfo };

/** A read's result as the panel shows it (values already JSON-encoded per SPEC §6). */
export interface ResultsView {
  sql: string;
  fields: { name: string; type: string }[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
}

/** `approved`: decided, waiting for the outside agent that proposed it to run it (execute_approved). */
export type ApprovalStatus = 'pending' | 'stale' | 'approved' | 'running' | 'executed' | 'rejected' | 'failed';

/** A write waiting for (or past) a person's decision, with everything needed to decide. */
export interface ApprovalView {
  ticketId: string;
  sql: string;
  status: ApprovalStatus;
  impact: ImpactView;
  /** Set once executed. */
  executed?: { at: string; rows: number; undoFile: string };
  error?: ErrorInfo;
  /** Who decided, once someone did; `signed`: a signature that verifies against approval.approvers. */
  decisions?: { by: string; approve: boolean; signed: boolean }[];
  /** An outside agent's proposal: who proposed it. Approving only decides it; that agent runs it (execute_approved). */
  proposedBy?: string;
  /**
   * A client transaction held whole by `pg-agent guard` (`sql`: its statements with their values, in order):
   * approving only decides it; the client's retry through the guard commits it.
   */
  transaction?: { statements: number };
}

/**
 * The impact report as the panel draws it: core's own ImpactReport (src/shared/impactReport.ts), without the
 * statements (the approval carries its SQL) and the approval flag (the approval's status says it).
 */
export type ImpactView = Omit<ImpactReport, 'statements' | 'requiresApproval'>;

/**
 * What the side panel shows of a result: its size and SQL, not its rows. The rows are in the Results view
 * (an editor-area grid), so no copy of 10,000 rows is pushed to the narrow panel at each state change.
 */
export interface RowsSummary {
  sql: string;
  rowCount: number;
  columns: number;
  truncated: boolean;
  elapsedMs: number;
}

export type AnswerStatus =
  'running' | 'answered' | 'held' | 'executed' | 'rejected' | 'refused' | 'failed' | 'cancelled';

/** The latest Ask…: the question, the SQL the model wrote, and what came of it. */
export interface AnswerView {
  threadId: string;
  question: string;
  status: AnswerStatus;
  sql: string | null;
  results: ResultsView | null;
  summary: string | null;
  /** Rows changed by an approved write. */
  executedRows: number | null;
  /** Tokens and estimated cost (USD; null when a model had no price) of the run's model calls. */
  usage: { calls: number; inputTokens: number; outputTokens: number; costUsd: number | null };
  error: ErrorInfo | null;
}

/** The latest answer as the side panel shows it: its rows as a summary (they open in the Results view). */
export type PanelAnswerView = Omit<AnswerView, 'results'> & { results: RowsSummary | null };

// ---- jobs (mirrors of core's job types: the webview may import only src/shared) ----------------

export type JobStatusName = 'planning' | 'pending_review' | 'running' | 'completed' | 'failed' | 'cancelled' | 'frozen';
export type JobPhaseName = 'strategic' | 'tactical';

/** One row of the panel's job list (from job.json). */
export interface JobListItem {
  id: string;
  title: string;
  status: JobStatusName;
  phase: JobPhaseName;
  reviewCycles: number;
  updatedAt: string;
  /** This window is running a step of the job right now. */
  busy: boolean;
  /** Where it stands (`jobStateText`): the same words the status bar shows for it. */
  state: string;
}

/** Why the selected job is not running (core's JobStop; the held write's impact is in `JobView.approval`). */
export type JobStopView =
  /** `ticketId` is the plan ticket the review decides; `planHash` the hash of the plan shown, sent back with a decision. */
  | {
      kind: 'review';
      cycle: number;
      maxReviewCycles: number;
      overLimit: boolean;
      ticketId: string | null;
      planHash: string | null;
    }
  | { kind: 'approval'; ticketId: string; sqlFile: string; todoId: string | null }
  | { kind: 'completed'; summary: string }
  | { kind: 'failed'; error: ErrorInfo }
  | { kind: 'cancelled' }
  | { kind: 'frozen' }
  /** Not running and not at a stop: a window reload, a cancelled step, or a step that failed (its error). */
  | { kind: 'interrupted'; error: ErrorInfo | null };

export type TodoStatusName = 'pending' | 'in_progress' | 'done' | 'skipped' | 'failed';

export interface TodoView {
  id: string;
  title: string;
  status: TodoStatusName;
  sql: string | null;
  /** The job's .sql file of this todo (relative to the job folder), when there is one. */
  sqlFile: string | null;
  dependsOn: string[];
}

export type TodosView =
  | {
      ok: true;
      items: TodoView[];
      counts: { done: number; skipped: number; failed: number; inProgress: number; total: number };
    }
  | { ok: false; error: string };

export interface ChatToolView {
  name: string;
  ok: boolean;
  /** One line for the folded view ("read plan.md"). */
  summary: string;
}

export interface PlanEditView {
  id: string;
  summary: string;
  /** Unified diff of plan.md. */
  diff: string;
}

export type ChatEntryView =
  | { kind: 'user'; at: string; text: string }
  | { kind: 'assistant'; at: string; text: string; tools: ChatToolView[] }
  | { kind: 'draft_feedback'; at: string; text: string }
  | {
      kind: 'plan_edit';
      at: string;
      id: string;
      summary: string;
      diff: string;
      status: 'proposed' | 'applied' | 'discarded';
    };

export interface ChatView {
  entries: ChatEntryView[];
  /** The message being answered and the reply as it streams in; null when no turn is in flight. */
  pending: { text: string; reply: string } | null;
  /** The latest feedback the chat drafted (for "Use as feedback"), or null. */
  draftFeedback: string | null;
  /** A proposed plan.md edit waiting for Apply / Discard, or null. */
  openPlanEdit: PlanEditView | null;
  /** Why the last message got no answer (the panel gives the message back to edit and resend). */
  error: { text: string; error: ErrorInfo } | null;
}

export interface UsageView {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; null once any call had no known price. */
  costUsd: number | null;
}

/** What this window is doing with the job right now (a progress notification is shown too). */
export interface JobBusyView {
  action:
    | 'plan'
    | 'approvePlan'
    | 'requestChanges'
    | 'skipReview'
    | 'continue'
    | 'pause'
    | 'cancel'
    | 'write'
    | 'chat'
    | 'planEdit';
  message: string;
}

/** The selected job: its files, where it stands, its review chat and what it cost so far. */
export interface JobView {
  id: string;
  title: string;
  status: JobStatusName;
  phase: JobPhaseName;
  reviewCycles: number;
  createdAt: string;
  updatedAt: string;
  /** Password-free key of the database the job works on. */
  connection: string;
  stop: JobStopView;
  busy: JobBusyView | null;
  /** Markdown, rendered by the webview through marked and DOMPurify. */
  workspaceMd: string;
  planMd: string;
  todos: TodosView;
  /** plan.md between the last two reviews; null before the second review. */
  planChange: { fromCycle: number; toCycle: number; diff: string } | null;
  /** The job's write waiting for (or just past) a decision, as the inline approval tracks it. */
  approval: ApprovalView | null;
  chat: ChatView;
  usage: UsageView;
  /** The job's own git history, newest first. */
  history: { oid: string; message: string; at: string }[];
  files: string[];
  /** Set past the soft limit of review cycles: the panel then offers "Run as is". */
  reviewWarning: string | null;
  /** The last failed action of this window on the job (the job itself stays where it was). */
  error: ErrorInfo | null;
}

/** A recent Ask…, newest first in the navigator: a click opens its result. */
export interface RecentAskView {
  threadId: string;
  question: string;
  status: AnswerStatus;
  /** When it was asked (ISO-8601). */
  at: string;
  /** The SQL it ran, once there is one: a read's rows no longer kept are fetched again with it. */
  sql?: string;
}

/**
 * Something waiting for a person's decision, from the ticket store: a write or a plan, asked for by this
 * window, a job, an agent, a terminal or a teammate.
 */
export interface WaitingView {
  ticketId: string;
  kind: 'write' | 'plan';
  /** The job's title for a plan; the statement's first line for a write. */
  title: string;
  risk: ImpactView['risk'];
  createdBy: string;
  createdAt: string;
  /** The job it belongs to (its cockpit decides it), when known. */
  jobId: string | null;
  /** This window tracks the write (its CodeLens and card are here). */
  here: boolean;
  /** A client transaction held whole by pg-agent guard: how many statements it has. */
  statements?: number;
}

export interface PanelState {
  connection: ConnectionState;
  schema: SchemaState;
  /** The latest read of Run SQL with Review (its rows are in the Results view). */
  results: RowsSummary | null;
  answer: PanelAnswerView | null;
  approvals: ApprovalView[];
  /** Whether the user has saved connection profiles (the first-minute buttons hide once they have). */
  hasProfiles: boolean;
  hasApiKey: boolean;
  /** Jobs of the workspace, newest first (each opens in its cockpit). */
  jobs: JobListItem[];
  /** The job last opened or focused (palette commands act on it). */
  selectedJobId: string | null;
  /** Recent Ask… runs, newest first. */
  recentAsks: RecentAskView[];
  /** Pending, unexpired tickets of the workspace's store, newest first. */
  waiting: WaitingView[];
}

export type HostMessage = { type: 'state'; version: number; state: PanelState };

/** For exhaustive switches over unions: a compile error when a case is missing. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
