/**
 * The whole contract between the host and the collaborative planning session view (an editor webview
 * panel): the host pushes versioned snapshots of the session; the view sends intents, which the host parses
 * with zod before acting (a webview is untrusted input). Plain data only: the webview imports this file.
 */
import * as z from 'zod/mini';
import { JOB_ID_PATTERN } from './ids';

export type CollabPhase = 'analysis' | 'awaiting-decision' | 'planning' | 'planned' | 'executed';

export interface CollabAnalysisView {
  label: 'A' | 'B';
  perspective: string;
  model: string;
  requestedModel: string;
  fallback: { from: string; reason: string } | null;
  sameModelPerspective: boolean;
  tokens: { input: number; output: number };
  latencyMs: number;
  costUsd: number | null;
  understanding: string;
  approaches: { id: string; name: string; description: string; effort: string }[];
  risks: string[];
  questions: string[];
}

export interface CollabPointView {
  point: string;
  reason: string;
  by: 'A' | 'B';
}

export interface CollabSolutionView {
  name: string;
  description: string;
  effort: string;
  risk: string;
  locks: string[];
  rowsTouched: number | null;
  maintainability: string;
  performance: string;
  pros: string[];
  cons: string[];
  affectedObjects: string[];
  sourceModels: string[];
  feasibility: number;
  refuted: string[];
}

export interface CollabRoundView {
  round: number;
  userInput: string | null;
  superseded: boolean;
  analyses: CollabAnalysisView[];
  agreements: CollabPointView[];
  disagreements: CollabPointView[];
  refuted: { approachId: string; sql: string; refuted: string[] }[];
  solutions: CollabSolutionView[];
  convergence: {
    score: number;
    agreement: number;
    feasibility: number;
    stability: number;
    recommendation: string;
    openDisagreements: number;
  };
  questions: string[];
  degraded: string | null;
  usage: { calls: number; inputTokens: number; outputTokens: number; costUsd: number | null };
}

export interface CollabSessionView {
  id: string;
  phase: CollabPhase;
  task: string;
  direction: string | null;
  models: string[];
  maxRounds: number;
  /** What the session asks of the person, in words; null when nothing. */
  asked: string | null;
  awaiting: { kind: 'choice' | 'clarification'; round: number; questions: string[]; options: number } | null;
  rounds: CollabRoundView[];
  decisions: { kind: string; by: string; at: string; option?: number; text?: string }[];
  selectedOption: number | null;
  /** IMPL_PLAN.md, rendered by the view through marked + DOMPurify. */
  implPlan: string | null;
  planTasks: { id: string; title: string; dependsOn: string[]; group: number }[];
  jobId: string | null;
  lastError: string | null;
  usage: {
    total: { calls: number; inputTokens: number; outputTokens: number; costUsd: number | null };
    byModel: { model: string; calls: number; inputTokens: number; outputTokens: number; costUsd: number | null }[];
  };
}

export interface CollabViewState {
  session: CollabSessionView | null;
  /** A step in progress ("Round 2: cross-verification…"), or null when idle. */
  busy: string | null;
  error: string | null;
}

export type CollabHostMessage = { type: 'state'; version: number; state: CollabViewState };

/** Longest text a person may send as a clarification or a new direction. */
export const MAX_COLLAB_TEXT = 4000;

const text = z.string().check(z.minLength(1), z.maxLength(MAX_COLLAB_TEXT));

const collabMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({
    type: z.literal('chooseOption'),
    sessionId: z.string(),
    option: z.number().check(z.int(), z.minimum(1), z.maximum(3)),
  }),
  z.strictObject({ type: z.literal('clarify'), sessionId: z.string(), text }),
  z.strictObject({ type: z.literal('redirect'), sessionId: z.string(), text }),
  z.strictObject({ type: z.literal('more'), sessionId: z.string() }),
  z.strictObject({ type: z.literal('execute'), sessionId: z.string() }),
  z.strictObject({ type: z.literal('openJob'), jobId: z.string().check(z.regex(JOB_ID_PATTERN)) }),
]);

export type CollabWebviewMessage = z.infer<typeof collabMessageSchema>;
export type CollabIntent = Exclude<CollabWebviewMessage, { type: 'ready' }>;

export function parseCollabMessage(
  raw: unknown,
): { ok: true; message: CollabWebviewMessage } | { ok: false; reason: string } {
  const parsed = collabMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid message' };
}
