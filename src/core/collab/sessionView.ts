/**
 * Where a session stands, read from its folder only (no model, no database): the state, every round's
 * synthesis, the plan files when written, and what the person is asked. Used by `plan show`, `plan list`
 * and the VS Code session view.
 */
import { AgentError } from '../platform/errors';
import type { PlanJson } from './planSchema';
import { planJsonSchema } from './planSchema';
import type { CollabStore } from './sessionStore';
import type { SessionState, Synthesis } from './sessionTypes';
import { parseSessionFile } from './sessionTypes';

export interface SessionView {
  state: SessionState;
  rounds: Synthesis[];
  implPlan: string | null;
  plan: PlanJson | null;
  /** One line on what the session waits for, or null when it waits for nothing. */
  asked: string | null;
}

export async function readSessionView(store: CollabStore, id: string): Promise<SessionView> {
  const state = await store.get(id);
  const rounds = await Promise.all(state.rounds.map((r) => store.readSynthesis(id, r.number)));
  const planned = state.phase === 'planned' || state.phase === 'executed';
  const implPlan = planned ? await optional(store.readText(id, 'IMPL_PLAN.md')) : null;
  const planText = planned ? await optional(store.readText(id, 'plan.json')) : null;
  const plan = planText === null ? null : parseSessionFile(planText, planJsonSchema, `plan.json of ${id}`);
  return { state, rounds, implPlan, plan, asked: askedOf(state) };
}

/** What the session asks of a person, in words (the CLI's exit-3 line and the view's banner). */
export function askedOf(state: SessionState): string | null {
  switch (state.phase) {
    case 'awaiting-decision': {
      const a = state.awaiting;
      if (!a) return 'a decision: choose an option, clarify, change direction or ask for more analysis';
      const uncertain =
        state.rounds.at(-1)?.recommendation === 'max_rounds'
          ? ` — not converged after ${state.roundsThisLeg} round(s): the options are uncertain`
          : '';
      const questions =
        a.questions.length > 0 ? ` Questions: ${a.questions.map((q, i) => `(${i + 1}) ${q}`).join(' ')}` : '';
      return a.kind === 'clarification'
        ? `clarification: the analysts disagree on more than 3 points after round ${a.round}; answer the questions (or choose an option anyway, change direction, ask for more).${questions}`
        : `a choice among ${a.options} option(s) of round ${a.round}${uncertain} (or a clarification, a new direction, more analysis).${questions}`;
    }
    case 'analysis':
      return state.lastError ? `the interrupted round to go on (more analysis): ${state.lastError.message}` : null;
    case 'planning':
      return state.lastError ? 'the plan to be written again (choose the option again)' : null;
    case 'planned':
      return 'execution as a job, or another decision';
    case 'executed':
      return null;
    default: {
      const unexpected: never = state.phase;
      throw new AgentError('INTERNAL', `Unknown session phase ${String(unexpected)}.`);
    }
  }
}

async function optional(read: Promise<string>): Promise<string | null> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof AgentError && error.code === 'BAD_INPUT') return null;
    throw error;
  }
}
