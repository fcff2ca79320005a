/**
 * Schema intelligence with a cache (issue: introspect once, not per question). Redis (1 h TTL) when
 * configured, else memory + a file under .pgagent/; keyed by connection and database; every read
 * checks the cheap schema version so DDL is noticed at once. Redis failing never fails the request:
 * the fallback serves it and a warning is logged.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { SchemaSnapshot } from '../../shared/schema';
import type { Logger } from '../logger';
import { connectRedis } from '../redisClient';
import type { Db } from './db';
import { introspectSchema } from './introspect';
import { catalogActivity, schemaVersion } from './schemaVersion';

export const SCHEMA_CACHE_TTL_SECONDS = 3600;

/** How long a full version check is trusted while the catalog activity counters stay the same. */
export const FULL_CHECK_INTERVAL_MS = 5000;

interface CachedSchema {
  version: string;
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
  /** The last full version check per connection, and the catalog activity seen then. */
  private readonly checked = new Map<string, { at: number; activity: string; version: string }>();

  constructor(private readonly options: SchemaCacheOptions) {}

  /** The schema of `db`, from the cache when its version is still current. */
  async get(db: Db, connectionKey: string): Promise<{ snapshot: SchemaSnapshot; source: SchemaSource }> {
    return db.withSession(async (session) => {
      const activity = await catalogActivity(session);
      const recent = this.checked.get(connectionKey);
      const inMemory = this.memory.get(connectionKey);
      if (recent && inMemory && recent.activity === activity && recent.version === inMemory.version && Date.now() - recent.at < FULL_CHECK_INTERVAL_MS) {
        return { snapshot: inMemory.snapshot, source: 'memory' as const };
      }
      const version = await schemaVersion(session);
      this.checked.set(connectionKey, { at: Date.now(), activity, version });
      const cached = await this.read(connectionKey);
      if (cached && cached.entry.version === version) return { snapshot: cached.entry.snapshot, source: cached.source };
      const snapshot = await introspectSchema(session, { sampleValues: this.options.sampleValues === true });
      await this.write(connectionKey, { version, snapshot });
      this.options.logger.info('schema introspected', { db: db.label, tables: snapshot.tables.length, stale: cached !== undefined });
      return { snapshot, source: 'introspected' as const };
    });
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
        const tmp = `${file}.${process.pid}.tmp`;
        await writeFile(tmp, text);
        await rename(tmp, file);
      } catch (error) {
        this.options.logger.warn('schema cache: could not write the cache file', { error: String(error) });
      }
    }
  }
}

/** A cache on Redis when a URL is given and reachable; otherwise (with a warning) memory + files. */
export async function openSchemaCache(options: { redisUrl?: string; dir?: string; sampleValues?: boolean; logger: Logger }): Promise<{ cache: SchemaCache; close(): Promise<void> }> {
  let redis: Redis | undefined;
  if (options.redisUrl) {
    try {
      redis = await connectRedis(options.redisUrl, { logger: options.logger, purpose: 'schema cache' });
    } catch (error) {
      options.logger.warn('schema cache: Redis unavailable, caching in .pgagent/ instead', { error: error instanceof Error ? error.message : String(error) });
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
