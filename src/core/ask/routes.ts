/** Pure routers of the ask graph: where the run goes next, decided from the state alone. */
import type { AskStateValue } from './state';

export const MAX_REPAIRS = 2;

/** After a model step: stop on an error, else validate. */
export function routeAfterModel(state: AskStateValue): 'validate' | 'stop' {
  return state.error ? 'stop' : 'validate';
}

/** By the PARSED classification, never by what the model claimed. */
export function routeAfterValidation(
  state: AskStateValue,
): 'repair' | 'read' | 'write' | 'refused' | 'failed' | 'stop' {
  if (state.error) return 'stop';
  if (state.validationError) return state.repairAttempts < MAX_REPAIRS ? 'repair' : 'failed';
  switch (state.classification?.decision) {
    case 'run':
      return 'read';
    case 'approve':
      return 'write';
    case 'refuse':
      return 'refused';
    default:
      return 'failed';
  }
}

/** After a step that may fail: go on, or stop. */
export function routeUnlessError(state: AskStateValue): 'next' | 'stop' {
  return state.error ? 'stop' : 'next';
}

/** Execution only with an approval; a rejection (or any error) ends the run. */
export function routeAfterApproval(state: AskStateValue): 'execute' | 'stop' {
  return !state.error && state.decision?.approve === true ? 'execute' : 'stop';
}
