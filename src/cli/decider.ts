/**
 * Who acts in a `pg-agent` command: the requester of the tickets it creates (`--by`, else the caller's
 * only key, else $USER) and the person deciding (signing with their key when they have one; `--key`).
 */
import type { SigningKey } from '../core/approvals/approvalPath';
import { callerKey, requesterName } from '../core/approvals/keyFiles';
import type { CommandContext } from './command';

function option(context: CommandContext, name: string): string | undefined {
  const value = context.args.options[name];
  return typeof value === 'string' ? value : undefined;
}

export function requesterOf(context: CommandContext): Promise<string> {
  return requesterName(context.io.env, option(context, 'by'));
}

/** The decider: their key (signs) and/or --by; decideTicket refuses a --by that is not the key's name. */
export async function deciderOf(context: CommandContext): Promise<{ by?: string; key?: SigningKey }> {
  const key = await callerKey(context.io.env, option(context, 'key'), context.io.passphrase);
  const by = option(context, 'by');
  if (key) return { key, ...(by !== undefined ? { by } : {}) };
  return { by: by ?? (context.io.env.USER?.trim() || 'cli-user') };
}
