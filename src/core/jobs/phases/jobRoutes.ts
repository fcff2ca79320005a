/** The routers of the phases graph: pure functions of the state, returning literal unions. */
import type { JobStateValue } from './jobState';

type S = Pick<JobStateValue, 'phaseEnd' | 'pendingWrite' | 'reviewRequired' | 'review'>;

/** After a model call: its tool calls run, or (no calls, or past the cap) the phase ends. */
export function routeAfterModel(state: S): 'tools' | 'end' {
  return state.phaseEnd ? 'end' : 'tools';
}

export function routeAfterStrategicTools(state: S): 'model' | 'end' {
  return state.phaseEnd ? 'end' : 'model';
}

/** A held write waits for a person before anything else happens in the phase. */
export function routeAfterTacticalTools(state: S): 'approval' | 'model' | 'end' {
  if (state.pendingWrite) return 'approval';
  return state.phaseEnd ? 'end' : 'model';
}

/** After executeWrite: a write that could not get its locks waits at its stop again; otherwise the model goes on. */
export function routeAfterWrite(state: S): 'approval' | 'model' {
  return state.pendingWrite ? 'approval' : 'model';
}

export function routeAfterStrategic(state: S): 'review' | 'tactical' | 'complete' | 'fail' {
  if (state.phaseEnd?.kind === 'job_complete') return 'complete';
  if (state.phaseEnd?.kind === 'job_failed') return 'fail';
  return state.reviewRequired ? 'review' : 'tactical';
}

/** A decision that did not parse leaves the job at review. */
export function routeAfterReview(state: S): 'strategic' | 'tactical' | 'review' {
  if (!state.review) return 'review';
  return state.review.action === 'revise' ? 'strategic' : 'tactical';
}

export function routeAfterTactical(state: S): 'strategic' | 'complete' | 'fail' {
  if (state.phaseEnd?.kind === 'job_complete') return 'complete';
  if (state.phaseEnd?.kind === 'job_failed') return 'fail';
  return 'strategic';
}
