/**
 * Runs the tool calls of the last model turn in order and answers each. A write asked for with run_sql
 * stops the turn there: it waits for a person, and the calls after it are answered once it is decided.
 * The job's status in job.json is the one source of truth for pause and cancel; it is read before each call.
 */
import type { ChatMessage } from '../../../llm/provider';
import type { JobGraphDeps } from '../jobGraphDeps';
import { activeJob } from '../jobStatusSync';
import type { PendingWrite, PhaseEnd } from '../jobState';
import type { Phase } from '../jobTools';
import type { TruncatedRead } from '../jobWriteFindings';
import { clip, runTool } from '../runTool';
import type { JobNode } from './nodeType';

export function makePhaseToolsNode(deps: JobGraphDeps, phase: Phase): JobNode {
  return async (state) => {
    const last = state.messages[state.messages.length - 1];
    const calls = last?.role === 'assistant' ? (last.toolCalls ?? []) : [];
    const answers: ChatMessage[] = [];
    let phaseEnd: PhaseEnd | undefined;
    let pendingWrite: PendingWrite | undefined;
    const truncatedReads: TruncatedRead[] = [];
    const memory = {
      truncatedReads: state.truncatedReads,
      columnsSet: state.columnsSet,
      onTruncated: (read: TruncatedRead) => truncatedReads.push(read),
    };
    for (const [index, call] of calls.entries()) {
      // A pause (or cancel) from any process holds before the next tool call, previews included: the calls
      // of a model answer that was in flight when the person paused do not run. Continue answers them anew.
      await activeJob(deps, state.jobId);
      const outcome = await runTool(deps, state.jobId, phase, call, {
        ...memory,
        truncatedReads: [...state.truncatedReads, ...truncatedReads],
      });
      await deps.audit(state.jobId, {
        type: 'tool_call',
        phase,
        name: call.name,
        args: call.args,
        ok: outcome.kind !== 'result' || outcome.ok,
        result: clip(outcome.content, 4000),
      });
      if (outcome.kind === 'held') {
        pendingWrite = {
          ...outcome.write,
          toolCallId: call.id,
          toolName: call.name,
          laterCalls: calls.slice(index + 1).map((c) => ({ id: c.id, name: c.name })),
        };
        deps.emit({ type: 'step', jobId: state.jobId, phase, message: 'Waiting for your approval of a write…' });
        break;
      }
      answers.push({ role: 'tool', name: call.name, toolCallId: call.id, content: outcome.content });
      if (outcome.kind === 'end') phaseEnd ??= outcome.end;
    }
    return {
      messages: answers,
      ...(phaseEnd ? { phaseEnd } : {}),
      ...(pendingWrite ? { pendingWrite } : {}),
      ...(truncatedReads.length > 0 ? { truncatedReads } : {}),
    };
  };
}
