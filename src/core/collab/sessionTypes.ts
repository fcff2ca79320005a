/**
 * The files of a collaborative planning session (SPEC §4 `.pgagent/collab/<session-id>/`): the shapes of
 * session-state.json and rounds/N/synthesis.json, checked with zod whenever they are read back.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import { SESSION_ID_PATTERN } from '../../shared/ids';

export function newSessionId(): string {
  return `collab_${randomBytes(8).toString('hex')}`;
}

export function assertSessionId(id: string): void {
  if (!SESSION_ID_PATTERN.test(id)) {
    throw new AgentError(
      'BAD_INPUT',
      `"${id.slice(0, 60)}" is not a planning session id.`,
      'Session ids look like collab_ followed by 16 hexadecimal digits; list them with pg-agent plan list.',
    );
  }
}

/**
 * Where a session stands. `analysis` while a round runs (also after an interrupted round: `plan decide --more`
 * goes on), `awaiting-decision` when a person must choose, clarify, redirect or ask for more, `planning`
 * while IMPL_PLAN.md and plan.json are written, `planned` when they are, `executed` once handed to a job.
 */
export const SESSION_PHASES = ['analysis', 'awaiting-decision', 'planning', 'planned', 'executed'] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

export const RECOMMENDATIONS = ['converged', 'user_input_needed', 'continue', 'max_rounds'] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];

export const PERSPECTIVES = ['data/architecture', 'implementation/SQL'] as const;
export type Perspective = (typeof PERSPECTIVES)[number];

const usageSchema = z.strictObject({
  calls: z.number().int().min(0),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  costUsd: z.number().nullable(),
});
export type CollabUsage = z.infer<typeof usageSchema>;

const level = z.enum(['low', 'medium', 'high']);
const risk = z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);

/** One SQL of a proposal with what the verification found (in code, against the database). */
const verifiedSqlSchema = z.strictObject({
  approachId: z.string(),
  index: z.number().int().min(0),
  sql: z.string(),
  purpose: z.string(),
  claimedKind: z.enum(['read', 'write', 'ddl']),
  claimedObjects: z.array(z.string()),
  class: z.string().nullable(),
  parses: z.boolean(),
  /** EXPLAIN (reads) or the impact preview (writes) ran without error. */
  explains: z.boolean(),
  withinScope: z.boolean(),
  feasible: z.boolean(),
  /** What the database refuted, one claim per line ("does not parse: …", "touches public.x, not claimed"). */
  refuted: z.array(z.string()),
  estimatedRows: z.number().nullable(),
  exactRows: z.number().nullable(),
  risk: risk.nullable(),
  locks: z.array(z.string()),
  objects: z.array(z.string()),
});
export type VerifiedSql = z.infer<typeof verifiedSqlSchema>;

const analysisEntrySchema = z.strictObject({
  label: z.enum(['A', 'B']),
  perspective: z.enum(PERSPECTIVES),
  /** The configured model asked first, and the one that answered (different after a fallback). */
  requestedModel: z.string(),
  model: z.string(),
  fallback: z.strictObject({ from: z.string(), reason: z.string() }).nullable(),
  sameModelPerspective: z.boolean(),
  tokens: z.strictObject({ input: z.number().int(), output: z.number().int() }),
  latencyMs: z.number().int().min(0),
  costUsd: z.number().nullable(),
  analysis: z.unknown(),
});
export type AnalysisEntry = z.infer<typeof analysisEntrySchema>;

const pointSchema = z.strictObject({ point: z.string(), reason: z.string(), by: z.enum(['A', 'B']) });
export type ReviewPoint = z.infer<typeof pointSchema>;

const solutionSchema = z.strictObject({
  name: z.string(),
  description: z.string(),
  effort: level,
  risk,
  locks: z.array(z.string()),
  rowsTouched: z.number().nullable(),
  maintainability: z.string(),
  performance: z.string(),
  pros: z.array(z.string()),
  cons: z.array(z.string()),
  affectedObjects: z.array(z.string()),
  sourceModels: z.array(z.string()),
  approachIds: z.array(z.string()),
  feasibility: z.number().min(0).max(1),
  refuted: z.array(z.string()),
});
export type Solution = z.infer<typeof solutionSchema>;

const convergenceSchema = z.strictObject({
  score: z.number(),
  components: z.strictObject({ agreement: z.number(), feasibility: z.number(), stability: z.number() }),
  openDisagreements: z.number().int().min(0),
  newInsights: z.array(z.string()),
  recommendation: z.enum(RECOMMENDATIONS),
});
export type Convergence = z.infer<typeof convergenceSchema>;

export const synthesisSchema = z.strictObject({
  round: z.number().int().min(1),
  sessionId: z.string(),
  at: z.string(),
  /** The person's input this round answered (clarification, new direction), if any. */
  userInput: z.string().nullable(),
  analyses: z.array(analysisEntrySchema),
  cross_verification: z.strictObject({ agreements: z.array(pointSchema), disagreements: z.array(pointSchema) }),
  verification: z.array(verifiedSqlSchema),
  solutions: z.array(solutionSchema),
  convergence: convergenceSchema,
  clarification_questions: z.array(z.string()).max(4),
  /** The synthesis could not be read after one repair: the options are the analysts' approaches as they came. */
  degraded: z.strictObject({ reason: z.string() }).nullable(),
  usage: usageSchema,
});
export type Synthesis = z.infer<typeof synthesisSchema>;

const decisionSchema = z.strictObject({
  kind: z.enum(['option', 'clarify', 'redirect', 'more', 'execute']),
  by: z.string(),
  at: z.string(),
  round: z.number().int().min(0),
  option: z.number().int().min(1).optional(),
  text: z.string().optional(),
  jobId: z.string().optional(),
});
/** A person's choice at the end of a planning round (an option, a clarification, …), as session-state.json keeps it. */
export type SessionDecisionRecord = z.infer<typeof decisionSchema>;

const roundSummarySchema = z.strictObject({
  number: z.number().int().min(1),
  models: z.array(z.string()),
  solutions: z.number().int().min(0),
  score: z.number(),
  recommendation: z.enum(RECOMMENDATIONS),
  openDisagreements: z.number().int().min(0),
  degraded: z.boolean(),
  /** Rounds before a change of direction are kept, but no longer shown to the models. */
  superseded: z.boolean(),
});
export type RoundSummary = z.infer<typeof roundSummarySchema>;

const modelUsageSchema = z.strictObject({ model: z.string(), usage: usageSchema });

export const sessionStateSchema = z.strictObject({
  id: z.string().regex(SESSION_ID_PATTERN),
  task: z.string().min(1),
  /** The current direction after a redirect (the task otherwise). */
  direction: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  connection: z.string().min(1),
  maxRounds: z.number().int().min(1),
  /** The configured models as provider:model, in fallback order. */
  models: z.array(z.string()).min(1),
  phase: z.enum(SESSION_PHASES),
  currentRound: z.number().int().min(0),
  /** Rounds in the current run of automatic rounds (reset by each decision); bounded by maxRounds. */
  roundsThisLeg: z.number().int().min(0),
  rounds: z.array(roundSummarySchema),
  decisions: z.array(decisionSchema),
  /** What a person is asked at awaiting-decision. */
  awaiting: z
    .strictObject({
      kind: z.enum(['choice', 'clarification']),
      round: z.number().int().min(1),
      questions: z.array(z.string()),
      options: z.number().int().min(0),
    })
    .nullable(),
  selectedOption: z.number().int().min(1).nullable(),
  jobId: z.string().nullable(),
  lastError: z.strictObject({ code: z.string(), message: z.string(), at: z.string() }).nullable(),
  usage: z.strictObject({ total: usageSchema, byModel: z.array(modelUsageSchema) }),
});
export type SessionState = z.infer<typeof sessionStateSchema>;

/** JSON text of a session file to a checked value; the failing field is named in the error. */
export function parseSessionFile<T>(text: string, schema: z.ZodType<T>, source: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new AgentError(
      'CONFIG_INVALID',
      `${source} is not valid JSON: ${(error as Error).message}`,
      'The session folder was edited or damaged; start a new session.',
      { cause: error },
    );
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new AgentError(
      'CONFIG_INVALID',
      `${source} is invalid at ${where}: ${issue?.message ?? 'unknown problem'}.`,
      'The session folder was edited or damaged; start a new session.',
    );
  }
  return result.data;
}
