// The person's decisions on a collaborative planning session, which of them a session can take where it stands,
// and the task as the models see it after a change of direction.
import { AgentError } from '../platform/errors';
import type { SessionState } from './sessionTypes';

export type SessionDecision =
  | { kind: 'option'; option: number }
  | { kind: 'clarify'; text: string }
  | { kind: 'redirect'; text: string }
  | { kind: 'more' };

/** The task as the models see it: with the person's latest direction when they changed it. */
export function taskOf(state: Pick<SessionState, 'task' | 'direction'>): string {
  return state.direction
    ? `${state.task}\n\nNew direction from the person (replaces earlier approaches): ${state.direction}`
    : state.task;
}

/** Which decisions a session can take where it stands; anything else is bad input naming what it waits for. */
export function assertDecidable(state: SessionState, decision: SessionDecision): void {
  const allowed: Record<SessionState['phase'], readonly SessionDecision['kind'][]> = {
    analysis: ['more', 'redirect'],
    'awaiting-decision': ['option', 'clarify', 'redirect', 'more'],
    planning: ['option'],
    planned: ['option', 'redirect', 'clarify', 'more'],
    executed: [],
  };
  if (!allowed[state.phase].includes(decision.kind)) {
    const where = state.phase === 'executed' ? `executed as job ${state.jobId ?? '?'}` : state.phase;
    throw new AgentError(
      'BAD_INPUT',
      `Session ${state.id} is ${where}; it cannot take --${decision.kind === 'option' ? 'option' : decision.kind}.`,
      `See where it stands with pg-agent plan show ${state.id}.`,
    );
  }
  if ((decision.kind === 'clarify' || decision.kind === 'redirect') && decision.text.trim() === '') {
    throw new AgentError(
      'BAD_INPUT',
      `The ${decision.kind === 'clarify' ? 'clarification' : 'new direction'} is empty.`,
      'Write what the analysts should take into account.',
    );
  }
  if (decision.kind === 'option' && (!Number.isSafeInteger(decision.option) || decision.option < 1)) {
    throw new AgentError('BAD_INPUT', `--option needs a positive option number, got ${decision.option}.`);
  }
}
