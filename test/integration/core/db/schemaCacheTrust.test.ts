// A one-table read (describe_table, `pg-agent schema --table`) within the trust window of a confirmation made by
// any process sharing the cache asks the server nothing (proved with a closed database handle: any query would
// fail); the agent's own DDL voids every stamp at once (its announcement blanks the index's activity); a change
// made outside the agent is seen by a one-table read at most the window late, and by whole-schema reads at once.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import type { ConfirmedStamp, SchemaIndex } from '../../../../src/core/db/schemaCacheStore';
import { schemaChanges } from '../../../../src/core/db/schemaChanges';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { connectRedis, dropRedisPrefix, redisAvailable, redisPrefix } from '../../../support/services';

/** Long enough that no run of this test outlasts it: what is tested is who asks the server, not the clock. */
const WINDOW = 10 * 60_000;

function folderOf(dir: string): string {
  const [folder] = readdirSync(dir);
  if (!folder) throw new Error('no cache folder');
  return join(dir, folder);
}

describe.runIf(postgresAvailable)('schema cache trust window', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  /** A handle whose pool is closed: any query through it fails. */
  let closed: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      `CREATE SCHEMA a; CREATE SCHEMA b;
       CREATE TABLE a.t1 (id int PRIMARY KEY, name text);
       CREATE TABLE b.t1 (id int PRIMARY KEY, name text);
       CREATE TABLE b.t2 (id int PRIMARY KEY, t1_id int REFERENCES b.t1(id), note text);`,
    );
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    closed = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    await closed.close();
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('reads one table with no query when another process confirmed the cache within the window', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-trust-'));
    try {
      const filler = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      await filler.get(db, scratch.url);
      filler.dispose();
      const folder = folderOf(dir);
      const index = JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as SchemaIndex;
      const stamp = JSON.parse(readFileSync(join(folder, 'confirmed.json'), 'utf8')) as ConfirmedStamp;
      expect(stamp.activity).toBe(index.activity);

      const fresh = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      const table = await fresh.table(closed, scratch.url, 'b', 't2');
      expect(table?.columns.map((c) => c.name)).toEqual(['id', 't1_id', 'note']);
      fresh.dispose();
      // Without a window the same read asks the server first, and the closed handle says so.
      const exact = new SchemaCache({ dir, logger: silentLogger });
      await expect(exact.table(closed, scratch.url, 'b', 't2')).rejects.toThrow();
      exact.dispose();
      // A cache that never trusts writes no stamp.
      const other = mkdtempSync(join(tmpdir(), 'pgagent-trust-none-'));
      const plain = new SchemaCache({ dir: other, logger: silentLogger });
      await plain.get(db, scratch.url);
      plain.dispose();
      expect(existsSync(join(folderOf(other), 'confirmed.json'))).toBe(false);
      rmSync(other, { recursive: true, force: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("voids every stamp on the agent's own DDL; a change outside the agent waits for the window", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-trust-ddl-'));
    try {
      const filler = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      await filler.get(db, scratch.url);
      // The agent's DDL: committed, then announced (as executeApproved does); the filler blanks the stored activity.
      await execSql(scratch.url, 'ALTER TABLE b.t1 ADD COLUMN by_agent text');
      await schemaChanges.announce({ connection: scratch.url });
      const stored = JSON.parse(readFileSync(join(folderOf(dir), 'index.json'), 'utf8')) as SchemaIndex;
      expect(stored.activity).toBe('');
      const fresh = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      await expect(fresh.table(closed, scratch.url, 'b', 't1')).rejects.toThrow();
      expect((await fresh.table(db, scratch.url, 'b', 't1'))?.columns.map((c) => c.name)).toContain('by_agent');
      fresh.dispose();
      filler.dispose();

      // A person's DDL in psql, not announced: a one-table read within the window answers as of the stamp ...
      await execSql(scratch.url, 'ALTER TABLE b.t1 ADD COLUMN by_person text');
      const trusting = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      expect((await trusting.table(db, scratch.url, 'b', 't1'))?.columns.map((c) => c.name)).not.toContain('by_person');
      trusting.dispose();
      // ... and a whole-schema read checks the catalog, as does a one-table read without the window.
      const whole = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      const { snapshot } = await whole.get(db, scratch.url);
      const t1 = snapshot.tables.find((t) => t.schema === 'b' && t.name === 't1');
      expect(t1?.columns.map((c) => c.name)).toContain('by_person');
      whole.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe.runIf(redisAvailable)('on Redis', () => {
    const prefix = redisPrefix('pgagent-i34-trust');
    let redis: Redis;
    beforeAll(async () => (redis = await connectRedis()));
    afterAll(() => dropRedisPrefix(redis, prefix));

    it('keeps the stamp in a key that expires with the window; a fresh process reads one table with no query', async () => {
      const window = 60_000;
      const filler = new SchemaCache({ redis, prefix, trustForMs: window, logger: silentLogger });
      await filler.get(db, scratch.url);
      filler.dispose();
      const key = `${prefix}schema:${scratch.url}:confirmed`;
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(window);
      const fresh = new SchemaCache({ redis, prefix, trustForMs: window, logger: silentLogger });
      expect((await fresh.table(closed, scratch.url, 'a', 't1'))?.columns.map((c) => c.name)).toEqual(['id', 'name']);
      fresh.dispose();
      await redis.del(key);
      const unstamped = new SchemaCache({ redis, prefix, trustForMs: window, logger: silentLogger });
      await expect(unstamped.table(closed, scratch.url, 'a', 't1')).rejects.toThrow();
      unstamped.dispose();
    });
  });
});
