/**
 * One model call of a phase, with the phase's tools and the system prompt rebuilt from the job files.
 * A reply without tool calls ends the phase; so does the per-phase cap on model calls (the job then fails
 * rather than spending without end).
 */
import { AgentError } from '../../../platform/errors';
import type { ChatMessage } from '../../../llm/provider';
import { toolArgsWithPasswordsHidden } from '../../../sql/secrets/hidePasswords';
import { passwordsAsVerifiers } from '../../../sql/secrets/textPasswords';
import { modelCallEvent } from '../../jobAudit';
import type { JobGraphDeps } from '../jobGraphDeps';
import { phaseSystemPrompt } from '../phasePrompts';
import { activeJob } from '../jobStatusSync';
import type { Phase } from '../jobTools';
import { toolsFor } from '../jobTools';
import type { JobNode } from './nodeType';

export function makePhaseModelNode(deps: JobGraphDeps, phase: Phase): JobNode {
  return async (state) => {
    const job = await activeJob(deps, state.jobId);
    if (state.phaseCalls >= deps.maxModelCallsPerPhase) {
      return {
        phaseEnd: {
          kind: 'job_failed',
          reason: `The agent made ${state.phaseCalls} model calls in one ${phase} phase without finishing it (limit ${deps.maxModelCallsPerPhase}).`,
        },
      };
    }
    const provider = deps.provider;
    if (!provider)
      throw new AgentError(
        'CONFIG_INVALID',
        'Jobs need a language model and none is configured.',
        'Set a Gemini API key, or an OpenAI-compatible endpoint, then continue the job.',
      );
    const messages: ChatMessage[] = [
      { role: 'system', content: await phaseSystemPrompt(deps.store, job, phase) },
      ...state.messages,
    ];
    const reply = await provider.complete({
      messages,
      tools: toolsFor(phase),
      temperature: 0,
      timeoutMs: deps.modelTimeoutMs,
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    // The reply is kept (checkpoint, audit): a password the model wrote is kept as its verifier, as it will run.
    const response = {
      ...reply,
      text: passwordsAsVerifiers(reply.text),
      toolCalls: await Promise.all(
        reply.toolCalls.map(async (call) => ({ ...call, args: await toolArgsWithPasswordsHidden(call.args) })),
      ),
    };
    await deps.audit(state.jobId, modelCallEvent(`${phase}Model`, phase, messages, response));
    const usage = {
      calls: 1,
      inputTokens: response.usage.inputTokens,
      outputTokens: response.usage.outputTokens,
      costUsd: response.costUsd,
    };
    const assistant: ChatMessage = {
      role: 'assistant',
      content: response.text,
      ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
    };
    if (response.toolCalls.length > 0) {
      const names = [...new Set(response.toolCalls.map((c) => c.name))].join(', ');
      deps.emit({
        type: 'step',
        jobId: state.jobId,
        phase,
        message: `${phase === 'strategic' ? 'Planning' : 'Executing'}: ${names}`,
      });
      return { messages: [assistant], phaseCalls: state.phaseCalls + 1, usage };
    }
    // No tool call: the model has nothing more to do in this phase.
    const summary = response.text.trim().slice(0, 500) || `${phase} phase ended`;
    return {
      messages: [assistant],
      phaseCalls: state.phaseCalls + 1,
      usage,
      phaseEnd: phase === 'strategic' ? { kind: 'plan_ready', summary } : { kind: 'finish_phase', summary },
    };
  };
}
