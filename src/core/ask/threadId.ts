/** Run (thread) ids: they name checkpoint and audit folders, so only a safe shape is accepted. */
import { randomBytes } from 'node:crypto';
import { ASK_ID_PATTERN } from '../../shared/ids';
import { AgentError } from '../platform/errors';

export function newThreadId(): string {
  return `ask_${randomBytes(8).toString('hex')}`;
}

export function assertThreadId(id: string): void {
  if (!ASK_ID_PATTERN.test(id)) {
    throw new AgentError(
      'BAD_INPUT',
      `"${id.slice(0, 60)}" is not an ask run id.`,
      'Run ids look like ask_ followed by 16 letters and digits; copy it from the output of pg-agent ask.',
    );
  }
}
