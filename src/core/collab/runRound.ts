/**
 * One analysis round: both analysts analyse (each from its perspective, with fallbacks), every proposed SQL
 * is verified against the database, each analyst reviews the other's analysis anonymised ("Analysis A/B"),
 * a synthesis turns it all into 2–3 options (one repair, then a degraded round that says so), and the
 * convergence is computed in code. The result is rounds/N/synthesis.json.
 */
import type { Db } from '../db/db';
import { LlmError } from '../llm/llmError';
import type { LlmResponse } from '../llm/provider';
import type { SafetySettings } from '../sql/safetySettings';
import type { Analysis, Review, SynthesisOutput } from './analystSchemas';
import { analysisSchema, reviewSchema, synthesisOutputSchema } from './analystSchemas';
import type { Analyst } from './collabModels';
import { analysisMessages, reviewMessages, synthesisMessages } from './collabPrompts';
import type { RoundInputs } from './collabPrompts';
import { computeConvergence } from './convergence';
import type { CallRecorder, FallbackResult } from './fallbackCall';
import { callWithFallback } from './fallbackCall';
import type { AnalysisEntry, CollabUsage, ReviewPoint, Solution, Synthesis, VerifiedSql } from './sessionTypes';
import { feasibilityOf, normalizeObject, verifyProposal } from './verifyProposals';

export const MAX_QUESTIONS = 4;
const RISKS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;

export interface RoundDeps {
  db: Db;
  analysts: readonly [Analyst, Analyst];
  settings: SafetySettings;
  recorder: CallRecorder;
  signal?: AbortSignal;
  modelTimeoutMs?: number;
  now: () => Date;
  /** Called as the round goes ("Analysis A…", "Verifying 4 SQL statements…"). */
  progress?: (message: string) => void;
}

export interface RoundRequest extends RoundInputs {
  sessionId: string;
  round: number;
  knownInsights: readonly string[];
  roundsLeft: number;
}

export async function runRound(deps: RoundDeps, request: RoundRequest): Promise<Synthesis> {
  const [a, b] = deps.analysts;
  // Every response of the round, failed and repaired ones included, counts in its usage.
  const roundResponses: LlmResponse[] = [];
  const recorder: CallRecorder = {
    response: async (node, model, messages, response) => {
      roundResponses.push(response);
      await deps.recorder.response(node, model, messages, response);
    },
    fallback: (node, from, to, reason) => deps.recorder.fallback(node, from, to, reason),
  };
  const common = {
    recorder,
    ...(deps.signal ? { signal: deps.signal } : {}),
    ...(deps.modelTimeoutMs ? { timeoutMs: deps.modelTimeoutMs } : {}),
  };
  deps.progress?.(`Round ${request.round}: analyses A (${a.perspective}) and B (${b.perspective})…`);
  // Both calls are awaited even when one fails, so no answer arrives (and is counted) after the round gave up.
  const [resultA, resultB] = await settled(
    [a, b].map((analyst) =>
      callWithFallback(
        analyst.chain,
        analysisMessages(analyst.perspective, analyst.sameModel, request),
        analysisSchema,
        { ...common, node: `analysis_${analyst.label}` },
      ),
    ),
  );
  if (!resultA || !resultB) throw new Error('unreachable: two analyses were requested');
  const analyses = [
    { analyst: a, result: resultA },
    { analyst: b, result: resultB },
  ];

  const targets = analyses.flatMap(({ analyst, result }) =>
    result.value.approaches.flatMap((approach, i) =>
      approach.sql.map((proposal, index) => ({ approachId: `${analyst.label}${i + 1}`, index, proposal })),
    ),
  );
  deps.progress?.(`Round ${request.round}: verifying ${targets.length} SQL statement(s) against the database…`);
  const verification: VerifiedSql[] = [];
  for (const target of targets) verification.push(await verifyProposal(deps.db, target, deps.settings));

  deps.progress?.(`Round ${request.round}: cross-verification…`);
  const verificationOf = (label: 'A' | 'B') => verification.filter((v) => v.approachId.startsWith(label));
  const [reviewByA, reviewByB] = await settled([
    callWithFallback(
      a.chain,
      reviewMessages(a.perspective, 'B', resultB.value, verificationOf('B'), request.task),
      reviewSchema,
      { ...common, node: 'review_by_A' },
    ),
    callWithFallback(
      b.chain,
      reviewMessages(b.perspective, 'A', resultA.value, verificationOf('A'), request.task),
      reviewSchema,
      { ...common, node: 'review_by_B' },
    ),
  ]);
  if (!reviewByA || !reviewByB) throw new Error('unreachable: two reviews were requested');
  const reviews: { by: 'A' | 'B'; review: Review }[] = [
    { by: 'A', review: reviewByA.value },
    { by: 'B', review: reviewByB.value },
  ];

  deps.progress?.(`Round ${request.round}: synthesis of the options…`);
  let output: SynthesisOutput | null = null;
  let degraded: Synthesis['degraded'] = null;
  try {
    const synthesis = await callWithFallback(
      a.chain,
      synthesisMessages(
        request.task,
        [
          { label: 'A', analysis: resultA.value },
          { label: 'B', analysis: resultB.value },
        ],
        reviews,
        verification,
        request.userInput,
      ),
      synthesisOutputSchema,
      { ...common, node: 'synthesis', stopOn: (error) => error.kind === 'invalid_output' },
    );
    output = synthesis.value;
  } catch (error) {
    if (!(error instanceof LlmError) || error.kind !== 'invalid_output') throw error;
    degraded = {
      reason: `The synthesis could not be read after one repair (${error.message}); the options below are the analysts' own approaches, not merged or compared.`,
    };
  }

  const solutions = output
    ? output.solutions.map((s) => solutionFrom(s, analyses, verification))
    : degradedSolutions(analyses, verification);
  const questions = (output?.clarificationQuestions ?? [...resultA.value.questions, ...resultB.value.questions])
    .map((q) => q.trim())
    .filter((q) => q !== '');
  const agreements: ReviewPoint[] = reviews.flatMap(({ by, review }) => review.agreements.map((p) => ({ ...p, by })));
  const disagreements: ReviewPoint[] = reviews.flatMap(({ by, review }) =>
    review.disagreements.map((p) => ({ ...p, by })),
  );
  const convergence = computeConvergence({
    agreements: agreements.length,
    disagreements: disagreements.length,
    feasibility: feasibilityOf(verification),
    insights: reviews.flatMap(({ review }) => review.newInsights),
    knownInsights: request.knownInsights,
    roundsLeft: request.roundsLeft,
  });
  return {
    round: request.round,
    sessionId: request.sessionId,
    at: deps.now().toISOString(),
    userInput: request.userInput,
    analyses: analyses.map(({ analyst, result }) => analysisEntry(analyst, result)),
    cross_verification: { agreements, disagreements },
    verification,
    solutions,
    convergence,
    clarification_questions: [...new Set(questions)].slice(0, MAX_QUESTIONS),
    degraded,
    usage: usageOf(roundResponses),
  };
}

type AnalysisResult = { analyst: Analyst; result: FallbackResult<Analysis> };

function analysisEntry(analyst: Analyst, result: FallbackResult<Analysis>): AnalysisEntry {
  const usage = usageOf(result.responses);
  return {
    label: analyst.label,
    perspective: analyst.perspective,
    requestedModel: result.fallback?.from ?? result.model,
    model: result.model,
    fallback: result.fallback,
    sameModelPerspective: analyst.sameModel,
    tokens: { input: usage.inputTokens, output: usage.outputTokens },
    latencyMs: result.responses.reduce((sum, r) => sum + r.latencyMs, 0),
    costUsd: usage.costUsd,
    analysis: result.value,
  };
}

/** A synthesized option with its trade-offs measured from the verification of the SQL it builds on. */
function solutionFrom(
  s: SynthesisOutput['solutions'][number],
  analyses: readonly AnalysisResult[],
  verification: readonly VerifiedSql[],
): Solution {
  const ids = s.approachIds.map((id) => id.trim().toUpperCase());
  return {
    name: s.name,
    description: s.description,
    effort: s.effort,
    maintainability: s.maintainability,
    performance: s.performance,
    pros: s.pros,
    cons: s.cons,
    approachIds: ids,
    ...measured(ids, analyses, verification),
  };
}

/** Without a readable synthesis: the approaches as they came, A1, B1, A2, … (at most three). */
function degradedSolutions(analyses: readonly AnalysisResult[], verification: readonly VerifiedSql[]): Solution[] {
  const order: { id: string; approach: Analysis['approaches'][number] }[] = [];
  for (let i = 0; i < 3; i++) {
    for (const { analyst, result } of analyses) {
      const approach = result.value.approaches[i];
      if (approach) order.push({ id: `${analyst.label}${i + 1}`, approach });
    }
  }
  return order.slice(0, 3).map(({ id, approach }) => ({
    name: approach.name,
    description: approach.description,
    effort: approach.effort,
    maintainability: 'not assessed (degraded round)',
    performance: 'not assessed (degraded round)',
    pros: [],
    cons: [],
    approachIds: [id],
    ...measured([id], analyses, verification),
  }));
}

function measured(ids: readonly string[], analyses: readonly AnalysisResult[], verification: readonly VerifiedSql[]) {
  const items = verification.filter((v) => ids.includes(v.approachId));
  const risks = items.map((v) => v.risk).filter((r): r is NonNullable<typeof r> => r !== null);
  const risk = risks.reduce<(typeof RISKS)[number]>(
    (max, r) => (RISKS.indexOf(r) > RISKS.indexOf(max) ? r : max),
    'LOW',
  );
  const writes = items.filter((v) => v.class === 'write' || v.class === 'ddl');
  const rows = writes.map((v) => v.exactRows ?? v.estimatedRows);
  const models = new Set(
    ids
      .map((id) => analyses.find((x) => x.analyst.label === id[0])?.result.model)
      .filter((m): m is string => m !== undefined),
  );
  return {
    risk,
    locks: [...new Set(items.flatMap((v) => v.locks))],
    rowsTouched: rowsTouched(rows),
    affectedObjects: [...new Set(items.flatMap((v) => [...v.objects, ...v.claimedObjects.map(normalizeObject)]))],
    sourceModels: [...models],
    feasibility: Math.round(feasibilityOf(items) * 1000) / 1000,
    refuted: items.flatMap((v) => v.refuted.map((r) => `${v.approachId} sql#${v.index + 1}: ${r}`)),
  };
}

/** Rows the option's writes touch: 0 without writes, unknown (null) when any write could not be measured. */
function rowsTouched(rows: readonly (number | null)[]): number | null {
  let total = 0;
  for (const r of rows) {
    if (r === null) return null;
    total += r;
  }
  return total;
}

/** Like Promise.all, but waits for every promise before throwing the first failure. */
async function settled<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export function usageOf(responses: readonly LlmResponse[]): CollabUsage {
  return responses.reduce<CollabUsage>(
    (sum, r) => ({
      calls: sum.calls + 1,
      inputTokens: sum.inputTokens + r.usage.inputTokens,
      outputTokens: sum.outputTokens + r.usage.outputTokens,
      costUsd: sum.costUsd === null || r.costUsd === null ? null : sum.costUsd + r.costUsd,
    }),
    { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
  );
}
