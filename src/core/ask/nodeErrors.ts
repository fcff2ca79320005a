/** Turning a failure inside a node into the state's `error` (with an audit record), so the run ends cleanly. */
import { toAgentError } from '../platform/errors';
import type { ErrorInfo } from '../../shared/errorCodes';
import type { AskDeps } from './deps';

export async function failureInfo(deps: AskDeps, threadId: string, node: string, error: unknown): Promise<ErrorInfo> {
  const e = toAgentError(error);
  deps.logger.warn('ask node failed', { node, thread: threadId, code: e.code, error: e.message });
  await deps.audit.record(threadId, { type: 'error', node, code: e.code, message: e.message });
  return e.toInfo();
}
