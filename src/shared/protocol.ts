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

export interface PanelState {
  connection: ConnectionState;
  schema: SchemaState;
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
] as const;

export type PanelCommand = (typeof PANEL_COMMANDS)[number];

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('runCommand'), command: z.enum(PANEL_COMMANDS) }),
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
