import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import type { Logger } from '../../../../src/core/platform/logger';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { connectRedis, dropRedisPrefix, REDIS_URL, redisAvailable, redisPrefix } from '../../../support/services';

describe.runIf(postgresAvailable)('schema cache', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-schema-cache-'));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, 'CREATE TABLE things (id int PRIMARY KEY, name text)');
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves from memory, then from its file in a new process, and notices DDL and comments', async () => {
    const cache = new SchemaCache({ dir, logger: silentLogger });
    expect((await cache.get(db, scratch.url)).source).toBe('introspected');
    expect((await cache.get(db, scratch.url)).source).toBe('memory');
    const fresh = new SchemaCache({ dir, logger: silentLogger });
    expect((await fresh.get(db, scratch.url)).source).toBe('file');

    await execSql(scratch.url, 'ALTER TABLE things ADD COLUMN price numeric');
    const afterDdl = await fresh.get(db, scratch.url);
    expect(afterDdl.source).toBe('introspected');
    expect(afterDdl.snapshot.tables[0]?.columns.map((c) => c.name)).toEqual(['id', 'name', 'price']);

    await execSql(scratch.url, `COMMENT ON TABLE things IS 'Things we sell'`);
    const afterComment = await fresh.get(db, scratch.url);
    expect(afterComment.source).toBe('introspected');
    expect(afterComment.snapshot.tables[0]?.comment).toBe('Things we sell');

    await execSql(scratch.url, 'ALTER TABLE things ALTER COLUMN name TYPE varchar(40)');
    expect((await fresh.get(db, scratch.url)).snapshot.tables[0]?.columns[1]?.type).toBe('character varying(40)');
  });

  describe.runIf(redisAvailable)('on Redis', () => {
    const prefix = redisPrefix('pgagent-test');
    let redis: Redis;
    beforeAll(async () => (redis = await connectRedis()));
    afterAll(() => dropRedisPrefix(redis, prefix));

    it('shares the snapshot between instances with a one-hour TTL', async () => {
      const a = new SchemaCache({ redis, prefix, logger: silentLogger });
      expect((await a.get(db, scratch.url)).source).toBe('introspected');
      const b = new SchemaCache({ redis, prefix, logger: silentLogger });
      expect((await b.get(db, scratch.url)).source).toBe('redis');
      const ttl = await redis.ttl(`${prefix}schema:${scratch.url}:index`);
      expect(ttl).toBeGreaterThan(3500);
      expect(ttl).toBeLessThanOrEqual(3600);
    });

    it('keeps answering from its local copy with a warning when Redis goes down', async () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
      await client.connect();
      const warnings: string[] = [];
      const logger: Logger = { ...silentLogger, warn: (message) => warnings.push(message) };
      client.disconnect();
      const cache = new SchemaCache({ redis: client, prefix, logger });
      const served = await cache.get(db, scratch.url);
      expect(served.source).toBe('introspected');
      expect(served.snapshot.tables.map((t) => t.name)).toEqual(['things']);
      expect(warnings.join(' ')).toContain('Redis unavailable');
      expect((await cache.get(db, scratch.url)).source).toBe('memory');
    });
  });
});
