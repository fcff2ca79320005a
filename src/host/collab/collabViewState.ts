/** The session as the view shows it: core's SessionView mapped to the plain types of collabProtocol.ts. */
import type { Analysis } from '../../core/collab/analystSchemas';
import type { SessionView } from '../../core/collab/sessionView';
import type { Synthesis } from '../../core/collab/sessionTypes';
import type { CollabRoundView, CollabSessionView } from '../../shared/collabProtocol';

export function toSessionView(view: SessionView): CollabSessionView {
  const { state } = view;
  const superseded = new Map(state.rounds.map((r) => [r.number, r.superseded]));
  return {
    id: state.id,
    phase: state.phase,
    task: state.task,
    direction: state.direction,
    models: state.models,
    maxRounds: state.maxRounds,
    asked: view.asked,
    awaiting: state.awaiting,
    rounds: view.rounds.map((s) => toRoundView(s, superseded.get(s.round) ?? false)),
    decisions: state.decisions.map((d) => ({
      kind: d.kind,
      by: d.by,
      at: d.at,
      ...(d.option !== undefined ? { option: d.option } : {}),
      ...(d.text !== undefined ? { text: d.text } : {}),
    })),
    selectedOption: state.selectedOption,
    implPlan: view.implPlan,
    planTasks:
      view.plan?.tasks.map((t) => ({ id: t.id, title: t.title, dependsOn: t.depends_on, group: t.execution_group })) ??
      [],
    jobId: state.jobId,
    lastError: state.lastError?.message ?? null,
    usage: { total: state.usage.total, byModel: state.usage.byModel.map((m) => ({ model: m.model, ...m.usage })) },
  };
}

function toRoundView(s: Synthesis, superseded: boolean): CollabRoundView {
  return {
    round: s.round,
    userInput: s.userInput,
    superseded,
    analyses: s.analyses.map((a) => {
      const analysis = a.analysis as Analysis;
      return {
        label: a.label,
        perspective: a.perspective,
        model: a.model,
        requestedModel: a.requestedModel,
        fallback: a.fallback,
        sameModelPerspective: a.sameModelPerspective,
        tokens: a.tokens,
        latencyMs: a.latencyMs,
        costUsd: a.costUsd,
        understanding: analysis.understanding,
        approaches: analysis.approaches.map((x, i) => ({
          id: `${a.label}${i + 1}`,
          name: x.name,
          description: x.description,
          effort: x.effort,
        })),
        risks: analysis.risks,
        questions: analysis.questions,
      };
    }),
    agreements: s.cross_verification.agreements,
    disagreements: s.cross_verification.disagreements,
    refuted: s.verification
      .filter((v) => v.refuted.length > 0)
      .map((v) => ({ approachId: v.approachId, sql: v.sql, refuted: v.refuted })),
    solutions: s.solutions.map(({ approachIds: _ids, ...rest }) => rest),
    convergence: {
      score: s.convergence.score,
      ...s.convergence.components,
      recommendation: s.convergence.recommendation,
      openDisagreements: s.convergence.openDisagreements,
    },
    questions: s.clarification_questions,
    degraded: s.degraded?.reason ?? null,
    usage: s.usage,
  };
}
