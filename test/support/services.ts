/**
 * Access to the real PostgreSQL and Redis of this machine for integration tests. Under CI=true an
 * unreachable service fails the run; elsewhere the tests that need it are skipped with a loud line.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';

import { ADMIN_DATABASE_URL } from './scratchDatabase';

export const DATABASE_URL = ADMIN_DATABASE_URL;
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface ServiceCheck {
  available: boolean;
  reason: string;
}

async function tcpReachable(url: string, defaultPort: number): Promise<ServiceCheck> {
  const parsed = new URL(url);
  const port = Number(parsed.port || defaultPort);
  const host = parsed.hostname || '127.0.0.1';
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (check: ServiceCheck) => {
      socket.destroy();
      resolve(check);
    };
    socket.setTimeout(3000, () => done({ available: false, reason: `${host}:${port} timed out` }));
    socket.once('connect', () => done({ available: true, reason: '' }));
    socket.once('error', (error) => done({ available: false, reason: `${host}:${port}: ${error.message}` }));
  });
}

/** Decides whether tests needing a service run: fails under CI, skips loudly elsewhere. */
function requireService(name: string, check: ServiceCheck): boolean {
  if (check.available) return true;
  const line = `${name} is unreachable (${check.reason}); set ${name === 'PostgreSQL' ? 'DATABASE_URL' : 'REDIS_URL'} or start it.`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${line}`);
  console.warn(`\n!!!!! SKIPPING ${name} integration tests: ${line}\n`);
  return false;
}

export const postgresAvailable = requireService('PostgreSQL', await tcpReachable(DATABASE_URL, 5432));
export const redisAvailable = requireService('Redis', await tcpReachable(REDIS_URL, 6379));

/** A Redis key prefix of its own for one test file: `<name>-<random>:`. */
export const redisPrefix = (name: string): string => `${name}-${randomBytes(4).toString('hex')}:`;

/** A connected Redis client of the test's own (close it with dropRedisPrefix). */
export async function connectRedis(): Promise<Redis> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  return redis;
}

/** Every key under `prefix` deleted, then the client closed: what a test file leaves behind on Redis. */
export async function dropRedisPrefix(redis: Redis | undefined, prefix: string): Promise<void> {
  if (!redis) return;
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}

export { createScratchDatabase, execSql } from './scratchDatabase';
export type { ScratchDatabase } from './scratchDatabase';
