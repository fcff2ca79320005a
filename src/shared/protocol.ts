/**
 * The whole contract between the extension host and the review panel (webview). The host owns state
 * and pushes versioned snapshots; the webview sends intents, which the host parses with zod before
 * acting on them (a webview is untrusted input).
 */
import * as z from 'zod/mini';
import type { ErrorInfo } from './errorCodes';
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

export type SchemaState =
  | { status: 'idle' }
  | { status: 'loading' }
  | { status: 'ready'; tables: TableSummary[] }
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

export type ApprovalStatus = 'pending' | 'stale' | 'running' | 'executed' | 'rejected' | 'failed';

/** A write waiting for (or past) a person's decision, with everything needed to decide. */
export interface ApprovalView {
  ticketId: string;
  sql: string;
  status: ApprovalStatus;
  impact: ImpactView;
  /** Set once executed. */
  executed?: { at: string; rows: number; undoFile: string };
  error?: ErrorInfo;
}

/** The parts of the impact report the panel draws (mirrors core's ImpactReport). */
export interface ImpactView {
  risk: 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';
  estimatedRows: number | null;
  exactRows: number | null;
  previewMs: number;
  tables: { schema: string; name: string; via: 'direct' | 'cascade' | 'trigger'; inserted: number; updated: number; deleted: number }[];
  wouldFail: null | { code: string; message: string };
  warnings: string[];
  triggers: { table: string; name: string }[];
  foreignKeyActions: { constraint: string; table: string; references: string; action: string }[];
}

export type AnswerStatus = 'running' | 'answered' | 'held' | 'executed' | 'rejected' | 'refused' | 'failed' | 'cancelled';

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

export interface PanelState {
  connection: ConnectionState;
  schema: SchemaState;
  results: ResultsView | null;
  answer: AnswerView | null;
  approvals: ApprovalView[];
  /** Whether the user has saved connection profiles (the first-minute buttons hide once they have). */
  hasProfiles: boolean;
  hasApiKey: boolean;
}

export type HostMessage = { type: 'state'; version: number; state: PanelState };

// ---- webview → host --------------------------------------------------------------------------

/** Commands the panel's buttons may run; each is also a palette command. */
export const PANEL_COMMANDS = [
  'openSampleDatabase',
  'addConnection',
  'selectConnection',
  'setGeminiApiKey',
  'ask',
  'refreshSchema',
  /** The latest answer's SQL to the clipboard / into an untitled SQL editor (the host uses its own copy). */
  'copyAnswerSql',
  'openAnswerSql',
  /** The rows of the results grid / of the answer as CSV, written by the host from its own copy. */
  'exportResultsCsv',
  'exportAnswerCsv',
] as const;

export type PanelCommand = (typeof PANEL_COMMANDS)[number];

const ticketId = z.string().check(z.regex(/^tkt_[a-z2-7]{20}$/));

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('runCommand'), command: z.enum(PANEL_COMMANDS) }),
  /** A person's decision from the Impact view's buttons. */
  z.strictObject({ type: z.literal('decide'), ticketId, approve: z.boolean() }),
  z.strictObject({ type: z.literal('openUndo'), ticketId }),
  z.strictObject({ type: z.literal('openSql'), ticketId }),
]);

export type WebviewMessage = z.infer<typeof webviewMessageSchema>;

export type ParsedWebviewMessage =
  | { ok: true; message: WebviewMessage }
  | { ok: false; reason: string };

/** Parses an inbound message; anything malformed comes back as a reason to log, never acted on. */
export function parseWebviewMessage(raw: unknown): ParsedWebviewMessage {
  const parsed = webviewMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid message' };
}

/** For exhaustive switches over unions: a compile error when a case is missing. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
