/**
 * What the review panel and the cockpit send the host (webview → host): intents, parsed with zod before the host
 * acts on them (a webview is untrusted input). The host → webview half is protocol.ts.
 */
import * as z from 'zod/mini';
import { ASK_ID_PATTERN, JOB_ID_PATTERN, SHA256_HEX_PATTERN, TICKET_ID_PATTERN } from './ids';
import { MAX_MESSAGE_CHARS } from './limits';

/** Commands the panel's buttons may run; each is also a palette command. */
export const PANEL_COMMANDS = [
  'openSampleDatabase',
  'addConnection',
  'selectConnection',
  'setGeminiApiKey',
  'ask',
  'refreshSchema',
  /** A table by name, revealed in the Schema view (the panel lists only the first tables). */
  'findTable',
  /** The latest answer's SQL to the clipboard / into an untitled SQL editor (the host uses its own copy). */
  'copyAnswerSql',
  'openAnswerSql',
  /** The Results view, where the rows of reads and answers are. */
  'showResults',
  /** Jobs: start one (input box for the task), pick one from a list. */
  'newJob',
  'openJob',
] as const;

export type PanelCommand = (typeof PANEL_COMMANDS)[number];

const ticketId = z.string().check(z.regex(TICKET_ID_PATTERN));
const jobId = z.string().check(z.regex(JOB_ID_PATTERN));
const planHash = z.string().check(z.regex(SHA256_HEX_PATTERN));

const messageText = z.string().check(
  z.maxLength(MAX_MESSAGE_CHARS),
  z.refine((text) => text.trim() !== '', 'must not be blank'),
);
/** Ids the review chat gives its plan edits. */
const editId = z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$/));
/** A file of the job folder as the panel names it (the host checks again that it stays inside). */
const jobFilePath = z
  .string()
  .check(z.maxLength(300), z.regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9_][A-Za-z0-9_./-]*$/));

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('runCommand'), command: z.enum(PANEL_COMMANDS) }),
  /** A person's decision from the Impact view's buttons. */
  z.strictObject({ type: z.literal('decide'), ticketId, approve: z.boolean() }),
  z.strictObject({ type: z.literal('openUndo'), ticketId }),
  z.strictObject({ type: z.literal('openSql'), ticketId }),
  /** "Use the safer statement": the host takes the SQL from the ticket's own lint finding, never from the panel. */
  z.strictObject({ type: z.literal('useSaferSql'), ticketId, rule: z.string().check(z.regex(/^[a-z][a-z-]{0,59}$/)) }),
  // Jobs: every intent names the job it was shown for, so a stale click can never act on another job.
  z.strictObject({ type: z.literal('selectJob'), jobId }),
  // Plan decisions name the plan ticket and the hash of the plan the person saw: a changed plan refuses them.
  z.strictObject({ type: z.literal('approvePlan'), jobId, ticketId: z.nullable(ticketId), planHash }),
  z.strictObject({
    type: z.literal('requestChanges'),
    jobId,
    ticketId: z.nullable(ticketId),
    planHash,
    feedback: messageText,
  }),
  z.strictObject({
    type: z.literal('skipReview'),
    jobId,
    ticketId: z.nullable(ticketId),
    planHash: z.nullable(planHash),
  }),
  z.strictObject({ type: z.literal('pauseJob'), jobId }),
  z.strictObject({ type: z.literal('cancelJob'), jobId }),
  z.strictObject({ type: z.literal('continueJob'), jobId }),
  z.strictObject({ type: z.literal('sendChat'), jobId, text: messageText, debug: z.boolean() }),
  z.strictObject({ type: z.literal('applyPlanEdit'), jobId, editId }),
  z.strictObject({ type: z.literal('discardPlanEdit'), jobId, editId }),
  z.strictObject({ type: z.literal('openJobFile'), jobId, path: jobFilePath }),
  /** A recent ask of the navigator: its result (postgresAgent.openAskResult). */
  z.strictObject({ type: z.literal('openAsk'), threadId: z.string().check(z.regex(ASK_ID_PATTERN)) }),
]);

export type WebviewMessage = z.infer<typeof webviewMessageSchema>;

/** The panel's intents about one job (every one names its job). */
export type JobIntent = Extract<WebviewMessage, { jobId: string }>;

/** A message about a job (it names one): the side panel and the cockpit hand these to the one job path. */
export function isJobIntent<M extends object>(message: M): message is Extract<M, { jobId: string }> {
  return 'jobId' in message && typeof message.jobId === 'string';
}

export type ParsedWebviewMessage = { ok: true; message: WebviewMessage } | { ok: false; reason: string };

/** Parses an inbound message; anything malformed comes back as a reason to log, never acted on. */
export function parseWebviewMessage(raw: unknown): ParsedWebviewMessage {
  const parsed = webviewMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid message' };
}
