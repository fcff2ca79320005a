/** How `pg-agent plan` shows a session: the --json object of every step, and the terminal text. */
import type { JobOutcome } from '../core/jobs/jobOutcome';
import type { SessionView } from '../core/collab/sessionView';
import type { Synthesis } from '../core/collab/sessionTypes';
import { columns, formatCount } from '../core/present/format';

/** Every step's --json: always `id` and `phase`; `jobId` once executed. */
export function sessionJson(view: SessionView, extra: { job?: JobOutcome } = {}) {
  const { state } = view;
  const latest = view.rounds.at(-1) ?? null;
  return {
    id: state.id,
    phase: state.phase,
    asked: view.asked,
    awaiting: state.awaiting,
    task: state.task,
    direction: state.direction,
    models: state.models,
    maxRounds: state.maxRounds,
    currentRound: state.currentRound,
    rounds: state.rounds,
    decisions: state.decisions,
    latest: latest === null ? null : roundJson(latest),
    selectedOption: state.selectedOption,
    plan: view.plan,
    implPlan: view.implPlan,
    jobId: state.jobId,
    ...(extra.job ? { job: { id: extra.job.job.id, status: extra.job.job.status, stop: extra.job.stop.kind } } : {}),
    lastError: state.lastError,
    usage: state.usage,
  };
}

function roundJson(s: Synthesis) {
  return {
    round: s.round,
    analyses: s.analyses.map(({ analysis: _analysis, ...rest }) => rest),
    cross_verification: s.cross_verification,
    refuted: s.verification
      .filter((v) => v.refuted.length > 0)
      .map((v) => ({ approachId: v.approachId, sql: v.sql, refuted: v.refuted })),
    solutions: s.solutions,
    convergence: s.convergence,
    clarification_questions: s.clarification_questions,
    degraded: s.degraded,
    usage: s.usage,
  };
}

export function renderSession(view: SessionView): string {
  const { state } = view;
  const out: string[] = [`Session ${state.id} — ${state.phase}`, `Task: ${state.task.split('\n')[0] ?? ''}`];
  if (state.direction) out.push(`Direction: ${state.direction}`);
  out.push(
    `Models: ${state.models.join(', ')}${state.models.length === 1 ? ' (two perspectives of the same model)' : ''}`,
  );
  const latest = view.rounds.at(-1);
  if (view.rounds.length > 0) {
    out.push('', 'Rounds:');
    out.push(
      columns(
        state.rounds.map((r) => [
          `  ${r.number}`,
          r.score.toFixed(2),
          r.recommendation,
          `${r.openDisagreements} open disagreement(s)`,
          r.degraded ? 'DEGRADED' : '',
          r.superseded ? '(before a change of direction)' : '',
        ]),
      ),
    );
  }
  if (latest) out.push('', ...renderRound(latest));
  if (view.implPlan !== null && view.plan) {
    out.push('', `Plan (option ${state.selectedOption ?? '?'}): ${view.plan.title} — ${view.plan.tasks.length} tasks`);
    out.push(
      columns(
        view.plan.tasks.map((t) => [
          `  ${t.id}`,
          t.title,
          `group ${t.execution_group}`,
          t.depends_on.length > 0 ? `after ${t.depends_on.join(', ')}` : '',
        ]),
      ),
    );
  }
  if (state.jobId) out.push('', `Executed as job ${state.jobId}: pg-agent job show ${state.jobId}`);
  if (state.lastError) out.push('', `Last error: ${state.lastError.message}`);
  const u = state.usage.total;
  out.push(
    '',
    `Usage: ${formatCount(u.calls)} calls, ${formatCount(u.inputTokens)} in / ${formatCount(u.outputTokens)} out tokens, ${u.costUsd === null ? 'cost unknown' : `$${u.costUsd.toFixed(4)}`}`,
  );
  for (const m of state.usage.byModel)
    out.push(
      `  ${m.model}: ${m.usage.calls} calls, ${formatCount(m.usage.inputTokens)} / ${formatCount(m.usage.outputTokens)} tokens, ${m.usage.costUsd === null ? 'cost unknown' : `$${m.usage.costUsd.toFixed(4)}`}`,
    );
  if (view.asked) out.push('', `Waiting for ${view.asked}`);
  out.push(...nextSteps(view));
  return out.join('\n');
}

function renderRound(s: Synthesis): string[] {
  const c = s.convergence;
  const out = [
    `Round ${s.round}: convergence ${c.score.toFixed(2)} (agreement ${c.components.agreement}, feasibility ${c.components.feasibility}, stability ${c.components.stability}) → ${c.recommendation}`,
  ];
  if (s.degraded) out.push(`  DEGRADED ROUND: ${s.degraded.reason}`);
  for (const a of s.analyses) {
    out.push(
      `  Analysis ${a.label} (${a.perspective}): ${a.model}${a.sameModelPerspective ? ' — same model, other perspective' : ''}${a.fallback ? ` — fallback from ${a.fallback.from} (${a.fallback.reason})` : ''}; ${a.tokens.input}/${a.tokens.output} tokens, ${a.latencyMs} ms`,
    );
  }
  const { agreements, disagreements } = s.cross_verification;
  out.push(`  Agreements: ${agreements.length} · Disagreements: ${disagreements.length}`);
  for (const d of disagreements.slice(0, 5)) out.push(`    ✗ ${d.point} — ${d.reason} (review by ${d.by})`);
  const refuted = s.verification.filter((v) => v.refuted.length > 0);
  if (refuted.length > 0) {
    out.push('  Refuted by the database:');
    for (const v of refuted) out.push(`    ${v.approachId} sql#${v.index + 1}: ${v.refuted.join('; ')}`);
  }
  out.push('', 'Options:');
  s.solutions.forEach((sol, i) => {
    out.push(`  ${i + 1}. ${sol.name} — ${sol.description}`);
    out.push(
      columns([
        ['     effort', sol.effort, 'risk', sol.risk, 'feasibility', `${Math.round(sol.feasibility * 100)} %`],
        [
          '     rows',
          sol.rowsTouched === null ? 'unknown' : formatCount(sol.rowsTouched),
          'locks',
          sol.locks.join(', ') || 'none known',
          'models',
          sol.sourceModels.join(', '),
        ],
      ]),
    );
    out.push(`     maintainability: ${sol.maintainability} · performance: ${sol.performance}`);
    if (sol.pros.length > 0) out.push(`     + ${sol.pros.join('; ')}`);
    if (sol.cons.length > 0) out.push(`     − ${sol.cons.join('; ')}`);
    if (sol.affectedObjects.length > 0) out.push(`     objects: ${sol.affectedObjects.join(', ')}`);
    if (sol.refuted.length > 0) out.push(`     refuted: ${sol.refuted.join('; ')}`);
  });
  if (s.clarification_questions.length > 0) {
    out.push('', 'Questions:');
    s.clarification_questions.forEach((q, i) => out.push(`  ${i + 1}. ${q}`));
  }
  return out;
}

function nextSteps(view: SessionView): string[] {
  const id = view.state.id;
  switch (view.state.phase) {
    case 'awaiting-decision':
    case 'planned':
      return [
        '',
        'Next:',
        `  pg-agent plan decide ${id} --option N          choose an option and write IMPL_PLAN.md + plan.json`,
        `  pg-agent plan decide ${id} --clarify "TEXT"    answer the questions; another round`,
        `  pg-agent plan decide ${id} --redirect "TEXT"   change direction; the analysis starts over`,
        `  pg-agent plan decide ${id} --more              another round as is`,
        ...(view.state.phase === 'planned'
          ? [`  pg-agent plan execute ${id}                   hand plan.json to a job (at its plan review)`]
          : []),
      ];
    case 'analysis':
      return view.state.lastError ? ['', `Go on with: pg-agent plan decide ${id} --more`] : [];
    default:
      return [];
  }
}
