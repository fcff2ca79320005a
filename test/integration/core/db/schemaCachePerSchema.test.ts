// The schema cache at scale: stored per schema, invalidated per schema (a change in one schema leaves the
// others' entries as they were), and one table read by a fresh process without the rest (asserted on the
// bytes read, and by a real `pg-agent` process that finds the other schemas' blobs gone and never needs them).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { bodyStart, tableRange, type BlobDirectory } from '../../../../src/core/db/schemaBlob';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import { schemaChanges } from '../../../../src/core/db/schemaChanges';
import type { SchemaIndex } from '../../../../src/core/db/schemaCacheStore';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { TableInfo } from '../../../../src/shared/schema';
import { pgAgentProcess } from '../../../support/cliProcess';
import { CLI_PATH, startMcp, type McpSession } from '../../../support/mcpClient';
import type { ScratchDatabase } from '../../../support/services';
import {
  createScratchDatabase,
  execSql,
  postgresAvailable,
  connectRedis,
  dropRedisPrefix,
  redisAvailable,
  redisPrefix,
} from '../../../support/services';

const TABLES = 40;

function tenantDdl(schema: string): string {
  const tables = Array.from({ length: TABLES }, (_, i) => {
    const ref = i > 0 ? ` REFERENCES ${schema}.t${i - 1}(id)` : '';
    return `CREATE TABLE ${schema}.t${i} (id int PRIMARY KEY, parent_id int${ref}, name text NOT NULL, amount numeric(10,2) DEFAULT 0, note text);`;
  });
  return `CREATE SCHEMA ${schema}; ${tables.join('\n')}`;
}

/** The index as a file store keeps it: the one file per connection folder. */
function fileIndex(dir: string): { folder: string; index: SchemaIndex } {
  const [folder] = readdirSync(dir);
  if (!folder) throw new Error('no cache folder');
  return {
    folder: join(dir, folder),
    index: JSON.parse(readFileSync(join(dir, folder, 'index.json'), 'utf8')) as SchemaIndex,
  };
}

const blobs = (index: SchemaIndex) => Object.fromEntries(Object.entries(index.schemas).map(([s, e]) => [s, e.blob]));

describe.runIf(postgresAvailable)('schema cache per schema', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, `${tenantDdl('a')} ${tenantDdl('b')} ${tenantDdl('c')}`);
    // c points into a: a change in a re-reads c too (its foreign key names a's table).
    await execSql(scratch.url, 'ALTER TABLE c.t0 ADD COLUMN a_id int REFERENCES a.t5(id)');
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('re-reads only the schema that changed (and those pointing into it); the others keep their entries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-per-schema-'));
    try {
      const cache = new SchemaCache({ dir, logger: silentLogger });
      const first = await cache.get(db, scratch.url);
      expect(first.source).toBe('introspected');
      expect(first.snapshot.tables).toHaveLength(3 * TABLES);
      const before = blobs(fileIndex(dir).index);
      expect(Object.keys(before).sort()).toEqual(['a', 'b', 'c']);
      expect(fileIndex(dir).index.schemas.c?.refs).toEqual(['a']);

      await execSql(scratch.url, 'ALTER TABLE b.t3 ADD COLUMN extra text');
      const afterB = await new SchemaCache({ dir, logger: silentLogger }).get(db, scratch.url);
      expect(afterB.source).toBe('introspected');
      expect(
        afterB.snapshot.tables.find((t) => t.schema === 'b' && t.name === 't3')?.columns.map((c) => c.name),
      ).toContain('extra');
      const nowB = blobs(fileIndex(dir).index);
      expect(nowB.a).toBe(before.a);
      expect(nowB.c).toBe(before.c);
      expect(nowB.b).not.toBe(before.b);

      await execSql(scratch.url, 'ALTER TABLE a.t5 RENAME TO t5_renamed');
      const afterA = await cache.get(db, scratch.url);
      const fk = afterA.snapshot.tables.find((t) => t.schema === 'c' && t.name === 't0')?.foreignKeys;
      expect(fk?.map((f) => f.references.table)).toContain('t5_renamed');
      const nowA = blobs(fileIndex(dir).index);
      expect(nowA.b).toBe(nowB.b);
      expect(nowA.a).not.toBe(nowB.a);
      expect(nowA.c).not.toBe(nowB.c);
      cache.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('forgets only the schemas named on the one schema-change event, in every cache of the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-per-schema-'));
    try {
      const cache = new SchemaCache({ dir, logger: silentLogger });
      await cache.get(db, scratch.url);
      const before = fileIndex(dir).index;
      await schemaChanges.announce({ connection: scratch.url, schemas: ['b'] });
      const after = fileIndex(dir).index;
      expect(Object.keys(after.schemas).sort()).toEqual(['a', 'c']);
      expect(after.schemas.a).toEqual(before.schemas.a);
      expect(after.activity).toBe('');
      // Another connection's announcement leaves this one alone.
      await schemaChanges.announce({ connection: 'postgres://elsewhere/db', schemas: ['a'] });
      expect(Object.keys(fileIndex(dir).index.schemas).sort()).toEqual(['a', 'c']);
      const again = await cache.get(db, scratch.url);
      expect(again.source).toBe('introspected');
      expect(blobs(fileIndex(dir).index)).toEqual(blobs(before));
      // A DDL's announcement names no schema: the versions are checked, nothing is re-read when none moved.
      await schemaChanges.announce({ connection: scratch.url });
      expect((await cache.get(db, scratch.url)).source).not.toBe('introspected');
      cache.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a fresh instance reads one table: the index, its schema directory and its bytes, not the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-per-schema-'));
    try {
      const filler = new SchemaCache({ dir, logger: silentLogger });
      await filler.get(db, scratch.url);
      filler.dispose();
      const { index } = fileIndex(dir);
      const total = Object.values(index.schemas).reduce((n, e) => n + e.bytes, 0);
      const fresh = new SchemaCache({ dir, logger: silentLogger });
      const table = await fresh.table(db, scratch.url, 'b', 't7');
      expect(table?.columns.map((c) => c.name)).toEqual(['id', 'parent_id', 'name', 'amount', 'note']);
      expect(table?.foreignKeys[0]?.references).toEqual({ schema: 'b', table: 't6', columns: ['id'] });
      const read = fresh.bytesRead(scratch.url);
      const indexBytes = readFileSync(join(fileIndex(dir).folder, 'index.json')).length;
      // Index + b's directory and one table: less than b's blob alone, a fraction of the whole cache.
      expect(read).toBeLessThan(indexBytes + (index.schemas.b?.bytes ?? 0));
      expect(read).toBeLessThan(total / 3);
      expect(await fresh.table(db, scratch.url, 'b', 'no_such')).toBeUndefined();
      fresh.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a real pg-agent process reads one table with the other schemas’ blobs gone, and never needs them', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'pgagent-per-schema-ws-'));
    try {
      const env = { HOME: ws, XDG_CONFIG_HOME: join(ws, '.config') };
      const whole = await pgAgentProcess(['schema', '--json', '--db', scratch.url, '--workspace', ws], {
        cwd: ws,
        env,
      });
      expect(whole.code, whole.stderr).toBe(0);
      const dir = join(ws, '.pgagent', 'schema-cache');
      const { folder, index } = fileIndex(dir);
      for (const schema of ['a', 'c']) rmSync(join(folder, `${index.schemas[schema]?.blob}.bin`));
      const indexWritten = statSync(join(folder, 'index.json')).mtimeMs;
      const one = await pgAgentProcess(
        ['schema', '--table', 'b.t7', '--json', '--db', scratch.url, '--workspace', ws],
        {
          cwd: ws,
          env,
        },
      );
      expect(one.code, one.stderr).toBe(0);
      const shown = JSON.parse(one.stdout) as { tables: { schema: string; name: string; columns: unknown[] }[] };
      expect(shown.tables.map((t) => `${t.schema}.${t.name}`)).toEqual(['b.t7']);
      expect(shown.tables[0]?.columns).toHaveLength(5);
      // Nothing was introspected or rewritten: the other blobs are still gone, the index untouched.
      expect(readdirSync(folder).filter((f) => f.endsWith('.bin'))).toEqual([`${index.schemas.b?.blob}.bin`]);
      expect(statSync(join(folder, 'index.json')).mtimeMs).toBe(indexWritten);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('a fresh MCP process answers describe_table from the index and that table’s bytes, incoming keys included', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'pgagent-per-schema-mcp-'));
    const env = { HOME: ws, XDG_CONFIG_HOME: join(ws, '.config') };
    let mcp: McpSession | undefined;
    try {
      const whole = await pgAgentProcess(['schema', '--json', '--db', scratch.url, '--workspace', ws], {
        cwd: ws,
        env,
      });
      expect(whole.code, whole.stderr).toBe(0);
      // The table c.t0 points to in a (a.t5, renamed by an earlier test when the whole file runs).
      const tables = (JSON.parse(whole.stdout) as { tables: TableInfo[] }).tables;
      const target =
        tables.find((t) => t.schema === 'c' && t.name === 't0')?.foreignKeys.at(-1)?.references.table ?? '';
      const { folder, index } = fileIndex(join(ws, '.pgagent', 'schema-cache'));
      for (const schema of ['b', 'c']) rmSync(join(folder, `${index.schemas[schema]?.blob}.bin`));
      // a's blob: every byte of its body but that table's made unreadable, so a whole read of it would fail.
      const aBlob = join(folder, `${index.schemas.a?.blob}.bin`);
      const bytes = readFileSync(aBlob);
      const directoryLength = bytes.readUInt32LE(0);
      const directory = JSON.parse(bytes.subarray(4, 4 + directoryLength).toString('utf8')) as BlobDirectory;
      const range = tableRange(directory, target);
      if (!range) throw new Error(`no ${target} in a`);
      const body = bodyStart(directoryLength);
      for (let i = body; i < bytes.length; i++) {
        if (i < body + range.start || i >= body + range.end) bytes[i] = 0x78;
      }
      writeFileSync(aBlob, bytes);
      const indexWritten = statSync(join(folder, 'index.json')).mtimeMs;

      mcp = await startMcp({
        command: process.execPath,
        args: [CLI_PATH, 'mcp', '--db', scratch.url, '--workspace', ws],
        cwd: ws,
        env,
      });
      const answer = await mcp.call('describe_table', { table: `a.${target}` });
      expect(answer.isError, JSON.stringify(answer.content)).toBeFalsy();
      const structured = answer.structuredContent as { tables: TableInfo[] };
      expect(structured.tables.map((t) => `${t.schema}.${t.name}`)).toEqual([`a.${target}`]);
      // Both ways: a.t6 points to it in its own schema, c.t0 from another one (whose blob is gone).
      expect(structured.tables[0]?.referencedBy).toEqual([
        { schema: 'a', table: 't6', columns: ['parent_id'], onDelete: 'NO ACTION' },
        { schema: 'c', table: 't0', columns: ['a_id'], onDelete: 'NO ACTION' },
      ]);
      // Nothing else was read whole, introspected or rewritten: the other blobs are still gone, the index untouched.
      expect(readdirSync(folder).filter((f) => f.endsWith('.bin'))).toEqual([`${index.schemas.a?.blob}.bin`]);
      expect(statSync(join(folder, 'index.json')).mtimeMs).toBe(indexWritten);
    } finally {
      await mcp?.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  describe.runIf(redisAvailable)('on Redis', () => {
    const prefix = redisPrefix('pgagent-test');
    let redis: Redis;
    beforeAll(async () => (redis = await connectRedis()));
    afterAll(() => dropRedisPrefix(redis, prefix));

    it('keeps a small index and a key per schema; one table is read by ranges; a change re-writes one key', async () => {
      const cache = new SchemaCache({ redis, prefix, logger: silentLogger });
      await cache.get(db, scratch.url);
      const indexKey = `${prefix}schema:${scratch.url}:index`;
      const index = JSON.parse((await redis.get(indexKey)) ?? '{}') as SchemaIndex;
      const blobKeys = await redis.keys(`${prefix}schema:${scratch.url}:blob:*`);
      expect(blobKeys).toHaveLength(3);
      const fresh = new SchemaCache({ redis, prefix, logger: silentLogger });
      expect((await fresh.table(db, scratch.url, 'c', 't2'))?.name).toBe('t2');
      expect(fresh.bytesRead(scratch.url)).toBeLessThan((await redis.strlen(indexKey)) + (index.schemas.c?.bytes ?? 0));

      await execSql(scratch.url, `COMMENT ON TABLE b.t1 IS 'changed ${Date.now()}'`);
      await cache.invalidate(scratch.url, { schemas: [] });
      await cache.get(db, scratch.url);
      const after = JSON.parse((await redis.get(indexKey)) ?? '{}') as SchemaIndex;
      expect(after.schemas.a?.blob).toBe(index.schemas.a?.blob);
      expect(after.schemas.c?.blob).toBe(index.schemas.c?.blob);
      expect(after.schemas.b?.blob).not.toBe(index.schemas.b?.blob);
      cache.dispose();
      fresh.dispose();
    });
  });
});
