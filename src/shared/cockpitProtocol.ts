/**
 * The job cockpit's contract (an editor panel per job, issue 15): the host pushes a versioned snapshot
 * of one job; the cockpit sends back the panel protocol's own job intents and write decisions (one set of
 * messages for both views, parsed by the same zod schema), narrowed to what a cockpit may send.
 */
import type { ErrorInfo } from './errorCodes';
import type { ApprovalView, JobPhaseName, JobView } from './protocol';
import type { WebviewMessage } from './panelMessages';
import { parseWebviewMessage } from './panelMessages';

// ---- host → cockpit --------------------------------------------------------------------------

/** One step of the job's activity: a phase iteration or the review chat's turns, with its model calls. */
export interface TimelineStepView {
  kind: 'phase' | 'chat';
  /** The phase of a 'phase' step; 'review' for the review chat. */
  phase: JobPhaseName | 'review';
  /** Iteration of the phase (1-based); for chat steps, the review cycle they belong to (0 before the first). */
  iteration: number;
  startedAt: string;
  /** null while the step runs (or when its end was never recorded). */
  endedAt: string | null;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; null once any call of the step had no known price. */
  costUsd: number | null;
  /** Sum of the calls' latencies. */
  modelMs: number;
  /** The phase's own summary, when it recorded one. */
  summary: string | null;
}

/** A moment between steps: a person's review decision, a status change, a write decided. */
export interface TimelineMarkView {
  at: string;
  text: string;
  /** Index of the step it follows (-1: before the first). */
  after: number;
}

export interface TimelineView {
  steps: TimelineStepView[];
  marks: TimelineMarkView[];
}

export interface CockpitState {
  jobId: string;
  /** The job, once read (null while it loads or when it cannot be read). */
  job: JobView | null;
  timeline: TimelineView;
  /** Every write the job asked for, newest first, with its impact and where its ticket stands (read-only). */
  writes: ApprovalView[];
  /** Why the job could not be read (a damaged job.json, a job deleted since). */
  error: ErrorInfo | null;
}

export type CockpitHostMessage = { type: 'cockpit'; version: number; state: CockpitState };

// ---- cockpit → host --------------------------------------------------------------------------

/** The panel messages a cockpit sends: its job's intents and the decision of its job's write. */
export const COCKPIT_MESSAGE_TYPES = [
  'ready',
  'approvePlan',
  'requestChanges',
  'skipReview',
  'pauseJob',
  'cancelJob',
  'continueJob',
  'sendChat',
  'applyPlanEdit',
  'discardPlanEdit',
  'openJobFile',
  'decide',
  'openSql',
  'openUndo',
  'useSaferSql',
] as const satisfies readonly WebviewMessage['type'][];

export type CockpitMessage = Extract<WebviewMessage, { type: (typeof COCKPIT_MESSAGE_TYPES)[number] }>;

export type ParsedCockpitMessage = { ok: true; message: CockpitMessage } | { ok: false; reason: string };

/**
 * Parses what a cockpit sent, with the panel protocol's schema, and keeps only a cockpit's messages: a job
 * intent must name the cockpit's own job (a stale or forged message never acts on another one).
 */
export function parseCockpitMessage(raw: unknown, jobId: string): ParsedCockpitMessage {
  const parsed = parseWebviewMessage(raw);
  if (!parsed.ok) return parsed;
  const message = parsed.message;
  if (!isCockpitMessage(message)) return { ok: false, reason: `type: ${message.type} is not a cockpit message` };
  if ('jobId' in message && message.jobId !== jobId)
    return { ok: false, reason: `jobId: ${message.jobId} is not this cockpit's job (${jobId})` };
  return { ok: true, message };
}

function isCockpitMessage(message: WebviewMessage): message is CockpitMessage {
  return (COCKPIT_MESSAGE_TYPES as readonly string[]).includes(message.type);
}
