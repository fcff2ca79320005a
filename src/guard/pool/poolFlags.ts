/**
 * `pg-agent guard --pool session|transaction [--pool-size N] [--pool-timeout SECONDS]`, read and checked.
 * Session (the default): each client has an upstream session of its own, as with a direct connection.
 * Transaction: clients share at most N upstream sessions (upstreamPool.ts).
 */
import { AgentError } from '../../core/platform/errors';
import type { PoolMode } from './upstreamPool';

export const DEFAULT_POOL_SIZE = 20;
export const DEFAULT_POOL_TIMEOUT_SECONDS = 30;

export const POOL_FLAGS_HELP = `  --pool session|transaction  session (default): each client has an upstream session of its own;
                      transaction: clients share --pool-size sessions, one bound to a client per transaction
  --pool-size N       transaction pool: at most N upstream sessions (default ${DEFAULT_POOL_SIZE})
  --pool-timeout SECONDS  transaction pool: how long a client waits for a free session (default ${DEFAULT_POOL_TIMEOUT_SECONDS})`;

export interface PoolFlags {
  mode: PoolMode;
  size: number;
  waitMs: number;
}

type Flag = string | boolean | undefined;

export function poolFlags(pool: Flag, size: Flag, timeout: Flag): PoolFlags {
  if (pool !== undefined && pool !== 'session' && pool !== 'transaction')
    throw new AgentError(
      'BAD_INPUT',
      `--pool "${String(pool)}" is not session or transaction.`,
      'For example --pool transaction --pool-size 20.',
    );
  const mode: PoolMode = pool === 'transaction' ? 'transaction' : 'session';
  if (mode === 'session' && (size !== undefined || timeout !== undefined))
    throw new AgentError(
      'BAD_INPUT',
      '--pool-size and --pool-timeout apply to --pool transaction (in session mode each client has its own upstream session).',
      'Add --pool transaction, or leave them out.',
    );
  return {
    mode,
    size: whole(size, '--pool-size', DEFAULT_POOL_SIZE, 10_000),
    waitMs: whole(timeout, '--pool-timeout', DEFAULT_POOL_TIMEOUT_SECONDS, 86_400) * 1000,
  };
}

function whole(value: Flag, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : 0;
  if (n < 1 || n > max)
    throw new AgentError(
      'BAD_INPUT',
      `${flag} "${String(value)}" is not a whole number from 1 to ${max}.`,
      `For example ${flag} ${fallback}.`,
    );
  return n;
}
