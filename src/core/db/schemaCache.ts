/**
 * Schema intelligence with a cache (introspect once, not per question or per step): memory, then Redis
 * (1 h TTL) when configured or a file under .pgagent/; keyed by connection and database. Freshness costs
 * one tiny query: the catalog's activity counters, stored with the entry, must be unchanged; when they
 * moved (or cannot be trusted) the schema version decides, and only a changed version re-introspects.
 * A DDL made through the agent calls invalidate() so the next read never waits for the counters.
 * Redis failing never fails the request: the fallback serves it and a warning is logged.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { SchemaSnapshot } from '../../shared/schema';
import { writeFileAtomic } from '../fs/atomicWrite';
import type { Logger } from '../platform/logger';
import { connectRedis } from '../platform/redisClient';
import type { Db } from './db';
import { introspectSchema } from './introspect';
import { catalogActivity, schemaVersion } from './schemaVersion';

export const SCHEMA_CACHE_TTL_SECONDS = 3600;

/**
 * A safety net: while the activity counters stay the same, a full version check still runs this often
 * (statistics can be reset to the very same numbers in theory; in practice this never finds anything).
 */
export const FULL_CHECK_INTERVAL_MS = 10 * 60_000;

interface CachedSchema {
  version: string;
  /** catalogActivity() when `version` was last confirmed; absent in entries written by older versions. */
  activity?: string;
  snapshot: SchemaSnapshot;
}

export type SchemaSource = 'redis' | 'memory' | 'file' | 'introspected';

export interface SchemaCacheOptions {
  /** A connected ioredis client, or undefined for memory + files. */
  redis?: Redis;
  /** Directory for the file fallback (.pgagent/schema-cache); undefined keeps it in memory only. */
  dir?: string;
  prefix?: string;
  /** Attach sample values (postgresAgent.schema.sampleValues); cached apart from plain snapshots. */
  sampleValues?: boolean;
  logger: Logger;
}

export class SchemaCache {
  private readonly memory = new Map<string, CachedSchema>();
  /** When the version of each connection was last checked in full. */
  private readonly checked = new Map<string, number>();

  constructor(private readonly options: SchemaCacheOptions) {}

  /** The schema of `db`, from the cache when it is still current. */
  async get(db: Db, connectionKey: string): Promise<{ snapshot: SchemaSnapshot; source: SchemaSource }> {
    return db.withSession(async (session) => {
      const activity = await catalogActivity(session);
      const trusted = activityTrusted(activity);
      const inMemory = this.memory.get(connectionKey);
      const lastFull = this.checked.get(connectionKey) ?? 0;
      if (inMemory && trusted && inMemory.activity === activity && Date.now() - lastFull < FULL_CHECK_INTERVAL_MS) {
        return { snapshot: inMemory.snapshot, source: 'memory' as const };
      }
      const cached = inMemory ? { entry: inMemory, source: 'memory' as const } : await this.read(connectionKey);
      // A new process (CLI run, window) finds the entry of an earlier one: the counters alone say it is current.
      if (cached && !inMemory && trusted && cached.entry.activity === activity) {
        this.checked.set(connectionKey, Date.now());
        return { snapshot: cached.entry.snapshot, source: cached.source };
      }
      const version = await schemaVersion(session);
      this.checked.set(connectionKey, Date.now());
      if (cached && cached.entry.version === version) {
        if (cached.entry.activity !== activity) await this.write(connectionKey, { ...cached.entry, activity });
        return { snapshot: cached.entry.snapshot, source: cached.source };
      }
      const snapshot = await introspectSchema(session, { sampleValues: this.options.sampleValues === true });
      await this.write(connectionKey, { version, activity, snapshot });
      this.options.logger.info('schema introspected', {
        db: db.label,
        tables: snapshot.tables.length,
        stale: cached !== undefined,
      });
      return { snapshot, source: 'introspected' as const };
    });
  }

  /**
   * Forgets the schema of a connection everywhere this cache keeps it (memory, Redis, file): call it right
   * after a DDL made through the agent, so the next read introspects without waiting for the statistics.
   */
  async invalidate(connectionKey: string): Promise<void> {
    this.memory.delete(connectionKey);
    this.checked.delete(connectionKey);
    if (this.options.redis) {
      try {
        await this.options.redis.del(this.key(connectionKey));
      } catch (error) {
        this.options.logger.warn('schema cache: could not remove the Redis entry', { error: String(error) });
      }
    }
    const file = this.fileFor(connectionKey);
    if (file) await rm(file, { force: true });
  }

  private key(connectionKey: string): string {
    return `${this.options.prefix ?? 'pgagent:'}schema${this.options.sampleValues ? '+samples' : ''}:${connectionKey}`;
  }

  private fileFor(connectionKey: string): string | undefined {
    if (!this.options.dir) return undefined;
    const key = `${this.options.sampleValues ? 'samples:' : ''}${connectionKey}`;
    return join(this.options.dir, `${createHash('sha256').update(key).digest('hex').slice(0, 24)}.json`);
  }

  private async read(connectionKey: string): Promise<{ entry: CachedSchema; source: SchemaSource } | undefined> {
    if (this.options.redis) {
      try {
        const text = await this.options.redis.get(this.key(connectionKey));
        if (text) {
          const entry = JSON.parse(text) as CachedSchema;
          // Kept locally too, so a Redis outage later still has something to serve.
          this.memory.set(connectionKey, entry);
          return { entry, source: 'redis' };
        }
      } catch (error) {
        this.options.logger.warn('schema cache: Redis unavailable, using the local cache', { error: String(error) });
      }
    }
    const inMemory = this.memory.get(connectionKey);
    if (inMemory) return { entry: inMemory, source: 'memory' };
    const file = this.fileFor(connectionKey);
    if (!file) return undefined;
    try {
      const entry = JSON.parse(await readFile(file, 'utf8')) as CachedSchema;
      this.memory.set(connectionKey, entry);
      return { entry, source: 'file' };
    } catch {
      return undefined;
    }
  }

  private async write(connectionKey: string, entry: CachedSchema): Promise<void> {
    this.memory.set(connectionKey, entry);
    const text = JSON.stringify(entry);
    if (this.options.redis) {
      try {
        await this.options.redis.set(this.key(connectionKey), text, 'EX', SCHEMA_CACHE_TTL_SECONDS);
      } catch (error) {
        this.options.logger.warn('schema cache: could not write to Redis', { error: String(error) });
      }
    }
    const file = this.fileFor(connectionKey);
    if (file && this.options.dir) {
      try {
        await mkdir(this.options.dir, { recursive: true });
        await writeFileAtomic(file, text);
      } catch (error) {
        this.options.logger.warn('schema cache: could not write the cache file', { error: String(error) });
      }
    }
  }
}

/**
 * Counters that never moved (all zero) mean no statistics are kept (track_counts off, PGlite): they say
 * nothing, and the version decides every time.
 */
function activityTrusted(activity: string): boolean {
  return activity !== '' && activity.split('.').some((n) => n !== '0');
}

/** A cache on Redis when a URL is given and reachable; otherwise (with a warning) memory + files. */
export async function openSchemaCache(options: {
  redisUrl?: string;
  dir?: string;
  sampleValues?: boolean;
  logger: Logger;
}): Promise<{ cache: SchemaCache; close(): Promise<void> }> {
  let redis: Redis | undefined;
  if (options.redisUrl) {
    try {
      redis = await connectRedis(options.redisUrl, { logger: options.logger, purpose: 'schema cache' });
    } catch (error) {
      options.logger.warn('schema cache: Redis unavailable, caching in .pgagent/ instead', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const cache = new SchemaCache({
    ...(redis ? { redis } : {}),
    ...(options.dir ? { dir: options.dir } : {}),
    ...(options.sampleValues ? { sampleValues: true } : {}),
    logger: options.logger,
  });
  return {
    cache,
    close: async () => {
      await redis?.quit().catch(() => redis?.disconnect());
    },
  };
}
