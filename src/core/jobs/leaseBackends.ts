/**
 * Where job leases live. Redis: SET NX PX and compare-and-swap scripts, expiry by Redis itself. Files:
 * `.pgagent/leases/<job>.json`, each read-compare-write done under a file mutex so that two processes never
 * both see the same lease free.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { withFileMutex } from '../fs/fileMutex';
import { connectRedis } from '../platform/redisClient';
import { settled, writeFileAtomic } from '../fs/atomicWrite';
import { ReadByIdentity } from './jobStore';
import type { LeaseBackend, LeaseHolder } from './jobLease';

const holderSchema = z.object({
  host: z.string(),
  pid: z.number().int(),
  by: z.string(),
  since: z.string(),
  expiresAt: z.number(),
  token: z.number().int(),
  nonce: z.string(),
});

function parseHolder(text: string, where: string): LeaseHolder {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = holderSchema.safeParse(json);
  if (!parsed.success) {
    throw new AgentError(
      'CONFIG_INVALID',
      `The job lease ${where} is not a lease record.`,
      `Delete ${where} if no process drives the job.`,
    );
  }
  return parsed.data;
}

export class FileLeaseBackend implements LeaseBackend {
  readonly kind = 'file' as const;
  /** Each job's lease, read again only when its file changed: the check before every job write is one stat. */
  private readonly leases = new ReadByIdentity<LeaseHolder>();

  constructor(private readonly dir: string) {}

  read(jobId: string): Promise<LeaseHolder | undefined> {
    const path = this.path(jobId);
    return settled(() => this.leases.read(path, (text) => parseHolder(text, path)));
  }

  create(jobId: string, next: LeaseHolder): Promise<boolean> {
    return this.locked(jobId, async () => {
      if (await this.read(jobId)) return false;
      await writeFileAtomic(this.path(jobId), JSON.stringify(next));
      return true;
    });
  }

  replace(jobId: string, expected: LeaseHolder, next: LeaseHolder): Promise<boolean> {
    return this.locked(jobId, async () => {
      if ((await this.read(jobId))?.nonce !== expected.nonce) return false;
      await writeFileAtomic(this.path(jobId), JSON.stringify(next));
      return true;
    });
  }

  async remove(jobId: string, expected: LeaseHolder): Promise<void> {
    await this.locked(jobId, async () => {
      if ((await this.read(jobId))?.nonce === expected.nonce) await rm(this.path(jobId), { force: true });
    });
  }

  nextToken(jobId: string): Promise<number> {
    return this.locked(jobId, async () => {
      const path = join(this.dir, `${jobId}.token`);
      const last = Number.parseInt(await readFile(path, 'utf8').catch(() => '0'), 10);
      const token = (Number.isFinite(last) ? last : 0) + 1;
      await writeFileAtomic(path, String(token));
      return token;
    });
  }

  private path(jobId: string): string {
    return join(this.dir, `${jobId}.json`);
  }

  private async locked<T>(jobId: string, body: () => Promise<T>): Promise<T> {
    await mkdir(this.dir, { recursive: true });
    const mutex = join(this.dir, `${jobId}.mutex`);
    return withFileMutex(
      mutex,
      body,
      () =>
        new AgentError(
          'JOB_BUSY',
          `The lease of job ${jobId} stays locked (${mutex}).`,
          `Delete ${mutex} if no pg-agent or VS Code is running.`,
        ),
    );
  }
}

const REPLACE_IF = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current).nonce ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

const REMOVE_IF = `
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current).nonce == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

export class RedisLeaseBackend implements LeaseBackend {
  readonly kind = 'redis' as const;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'pgagent:',
  ) {}

  async read(jobId: string): Promise<LeaseHolder | undefined> {
    const text = await this.redis.get(this.key(jobId));
    return text === null ? undefined : parseHolder(text, `${this.key(jobId)} (Redis)`);
  }

  async create(jobId: string, next: LeaseHolder, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(jobId), JSON.stringify(next), 'PX', ttlMs, 'NX')) === 'OK';
  }

  async replace(jobId: string, expected: LeaseHolder, next: LeaseHolder, ttlMs: number): Promise<boolean> {
    return (
      (await this.redis.eval(REPLACE_IF, 1, this.key(jobId), expected.nonce, JSON.stringify(next), String(ttlMs))) === 1
    );
  }

  async remove(jobId: string, expected: LeaseHolder): Promise<void> {
    await this.redis.eval(REMOVE_IF, 1, this.key(jobId), expected.nonce);
  }

  nextToken(jobId: string): Promise<number> {
    return this.redis.incr(`${this.prefix}lease-token:${jobId}`);
  }

  private key(jobId: string): string {
    return `${this.prefix}lease:${jobId}`;
  }
}

/**
 * The leases of a workspace: Redis when configured (shared with teammates, like tickets), else lock files
 * in .pgagent/leases/. Every driver of one workspace must choose the same way, so both the CLI and the
 * extension decide by the same Redis URL that decides where tickets live.
 */
export async function openLeaseBackend(options: {
  redisUrl?: string | undefined;
  leasesDir: string;
  logger: Logger;
  prefix?: string;
}): Promise<{ backend: LeaseBackend; close: () => Promise<void> }> {
  const redisUrl = options.redisUrl?.trim();
  if (!redisUrl) return { backend: new FileLeaseBackend(options.leasesDir), close: () => Promise.resolve() };
  const redis = await connectRedis(redisUrl, { logger: options.logger, purpose: 'tickets' });
  return {
    backend: new RedisLeaseBackend(redis, options.prefix),
    close: async () => void (await redis.quit().catch(() => redis.disconnect())),
  };
}
