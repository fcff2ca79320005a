/**
 * One way to connect to Redis (tickets, schema cache): a down Redis answers at once with
 * REDIS_UNREACHABLE instead of hanging, since commands are not queued while disconnected.
 */
import { Redis } from 'ioredis';
import { AgentError } from './errors';
import type { Logger } from './logger';

/** "redis://:***@host:6379" — a URL fit for messages and logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable Redis URL)';
  }
}

export type RedisPurpose = 'tickets' | 'schema cache';

export function redisUnreachable(where: string, error: unknown, purpose: RedisPurpose): AgentError {
  const detail = error instanceof Error ? error.message : String(error);
  return new AgentError(
    'REDIS_UNREACHABLE',
    `Cannot reach Redis at ${where} (${detail}).`,
    purpose === 'tickets'
      ? 'Start Redis or clear postgresAgent.redisUrl / REDIS_URL to keep tickets in .pgagent/approvals/'
      : 'Start Redis or clear postgresAgent.redisUrl / REDIS_URL; the schema cache then lives in .pgagent/.',
    { cause: error },
  );
}

export async function connectRedis(
  url: string,
  options: { logger: Logger; purpose: RedisPurpose; connectTimeoutMs?: number },
): Promise<Redis> {
  const where = redactRedisUrl(url);
  const protocol = URL.canParse(url) ? new URL(url).protocol : '';
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new AgentError(
      'CONFIG_INVALID',
      `"${where}" is not a Redis URL.`,
      'Set postgresAgent.redisUrl / REDIS_URL to redis://host:6379 (rediss:// for TLS), or clear it to use workspace files.',
    );
  }
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 3000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  // Without a listener ioredis prints every reconnect failure to the console; log each new cause once.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    if (error.message === lastError?.message) return;
    lastError = error;
    options.logger.warn('redis connection error', { redis: where, purpose: options.purpose, error: error.message });
  });
  redis.on('ready', () => (lastError = undefined));
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect(); // stop the background reconnects
    // connect() only says "Connection is closed."; the error event before it has the cause (ECONNREFUSED, ...).
    throw redisUnreachable(where, lastError ?? error, options.purpose);
  }
  return redis;
}
