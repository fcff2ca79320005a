// What a collaborative planning session records of each model call: the audit line and the usage (per model and
// in total, in the configured order) in its state.
import type { CallRecorder } from './fallbackCall';
import type { CollabStore } from './sessionStore';
import type { CollabUsage, SessionState } from './sessionTypes';

export const NO_USAGE: CollabUsage = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** Audit and usage of every model call of a session, per model and in total (kept in its state). */
export function sessionRecorder(
  state: SessionState,
  store: CollabStore,
  progress: ((message: string) => void) | undefined,
): CallRecorder {
  return {
    response: async (node, model, messages, response) => {
      const add = {
        calls: 1,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        costUsd: response.costUsd,
      };
      state.usage.total = addUsage(state.usage.total, add);
      const entry = state.usage.byModel.find((m) => m.model === model);
      if (entry) entry.usage = addUsage(entry.usage, add);
      else {
        state.usage.byModel.push({ model, usage: addUsage(NO_USAGE, add) });
        // In the configured order, whichever model answered first.
        state.usage.byModel.sort((x, y) => state.models.indexOf(x.model) - state.models.indexOf(y.model));
      }
      await store.audit(state.id, {
        type: 'model_call',
        node,
        model,
        messages,
        response: response.text,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        latencyMs: response.latencyMs,
        costUsd: response.costUsd,
      });
    },
    fallback: async (node, from, to, reason) => {
      progress?.(`${from} failed (${reason})${to ? `; ${to} takes over` : ''}`);
      await store.audit(state.id, { type: 'fallback', node, from, to, reason });
    },
  };
}

function addUsage(a: CollabUsage, b: CollabUsage): CollabUsage {
  return {
    calls: a.calls + b.calls,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd === null || b.costUsd === null ? null : Math.round((a.costUsd + b.costUsd) * 1e6) / 1e6,
  };
}
