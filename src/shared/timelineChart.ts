/**
 * The cockpit's activity chart as data: one bar per step (height by tokens), its short label and the sentence
 * a screen reader and the tooltip give. Plain functions, so the webview only draws and the rules are tested.
 */
import type { TimelineMarkView, TimelineStepView, TimelineView } from './cockpitProtocol';

export interface TimelineBar {
  label: string;
  phase: TimelineStepView['phase'];
  tokens: number;
  /** 0..1 of the tallest bar (a step without tokens still shows a sliver). */
  height: number;
  description: string;
  running: boolean;
  /** Marks (review decisions, status changes) right after this bar. */
  marksAfter: string[];
}

const PHASE_NAME: Record<TimelineStepView['phase'], string> = {
  strategic: 'Strategic phase',
  tactical: 'Tactical phase',
  review: 'Review chat',
};
const PHASE_LETTER: Record<TimelineStepView['phase'], string> = { strategic: 'S', tactical: 'T', review: 'R' };
const MIN_HEIGHT = 0.03;

export function costText(usd: number | null): string {
  return usd === null ? 'cost unknown' : `~$${usd.toFixed(4)}`;
}

function count(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** "S2" (strategic phase 2), "T1", "R1" (review chat during review 1; "R" before any review). */
export function stepLabel(step: Pick<TimelineStepView, 'phase' | 'iteration'>): string {
  return `${PHASE_LETTER[step.phase]}${step.iteration > 0 ? step.iteration : ''}`;
}

export function stepDescription(step: TimelineStepView): string {
  const name =
    step.phase === 'review'
      ? `${PHASE_NAME.review}${step.iteration > 0 ? ` (review ${step.iteration})` : ''}`
      : `${PHASE_NAME[step.phase]} ${step.iteration}`;
  const state = step.kind === 'phase' && step.endedAt === null ? ' — running or interrupted' : '';
  return `${name}${state}: ${count(step.calls, 'model call')}, ${step.inputTokens.toLocaleString('en-US')} in / ${step.outputTokens.toLocaleString('en-US')} out tokens, ${costText(step.costUsd)}, ${seconds(step.modelMs)} model time${step.summary ? ` — ${step.summary}` : ''}`;
}

export function timelineBars(timeline: TimelineView): TimelineBar[] {
  const tokens = timeline.steps.map((s) => s.inputTokens + s.outputTokens);
  const max = Math.max(1, ...tokens);
  const marksAfter = (i: number) => timeline.marks.filter((m: TimelineMarkView) => m.after === i).map((m) => m.text);
  return timeline.steps.map((step, i) => ({
    label: stepLabel(step),
    phase: step.phase,
    tokens: tokens[i] ?? 0,
    height: Math.max(MIN_HEIGHT, (tokens[i] ?? 0) / max),
    description: stepDescription(step),
    running: step.kind === 'phase' && step.endedAt === null,
    marksAfter: marksAfter(i),
  }));
}

/** Totals over the steps shown: "9 model calls · 52,185 tokens · ~$0.0184". */
export function timelineTotals(timeline: TimelineView): string {
  const calls = timeline.steps.reduce((n, s) => n + s.calls, 0);
  const tokens = timeline.steps.reduce((n, s) => n + s.inputTokens + s.outputTokens, 0);
  const cost = timeline.steps.reduce<number | null>(
    (sum, s) => (sum === null || s.costUsd === null ? null : sum + s.costUsd),
    0,
  );
  return `${count(timeline.steps.length, 'step')} · ${count(calls, 'model call')} · ${count(tokens, 'token')} · ${costText(cost)}`;
}
