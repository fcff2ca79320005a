// `context` over the schema cache: the linking index is built once per schema version and stored beside the
// schemas; a fresh process loads it and decodes only the schemas holding its entries' tables and the one the
// question is shown in (proved by removing the other schemas' blobs: nothing is read again from the catalog),
// and answers exactly what the context over the whole snapshot answers.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedSchemaContext } from '../../../../src/core/ask/cachedContext';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import type { SchemaIndex } from '../../../../src/core/db/schemaCacheStore';
import { schemaChanges } from '../../../../src/core/db/schemaChanges';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const TENANTS = 6;
const TABLES = 15;
const QUESTION = 'total amount per status of orders_3 for tenant 4';

function tenantDdl(schema: string): string {
  const tables = Array.from({ length: TABLES }, (_, i) => {
    const ref = i > 0 ? `, orders_${i - 1}_id int REFERENCES ${schema}.orders_${i - 1}(id)` : '';
    return `CREATE TABLE ${schema}.orders_${i} (id int PRIMARY KEY, status text, amount numeric(10,2)${ref});`;
  });
  return `CREATE SCHEMA ${schema}; ${tables.join('\n')}`;
}

function folderOf(dir: string): { folder: string; index: SchemaIndex } {
  const [name] = readdirSync(dir);
  if (!name) throw new Error('no cache folder');
  const folder = join(dir, name);
  return { folder, index: JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as SchemaIndex };
}

const derived = (folder: string) => readdirSync(folder).filter((f) => f.startsWith('link-'));

describe.runIf(postgresAvailable)('context over the schema cache, its linking index stored', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const tenants = Array.from({ length: TENANTS }, (_, i) => tenantDdl(`tenant_${i + 1}`));
    await execSql(scratch.url, `CREATE TABLE public.plans (id int PRIMARY KEY, plan_name text); ${tenants.join('\n')}`);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('builds the index once, and a fresh process answers the same from it and the schemas it needs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-cached-context-'));
    try {
      const first = new SchemaCache({ dir, logger: silentLogger });
      const built = await cachedSchemaContext(first, db, scratch.url, QUESTION, { budgetTokens: 6000 });
      const whole = (await first.get(db, scratch.url)).snapshot;
      expect(built).toEqual(buildSchemaContext(whole, QUESTION, { budgetTokens: 6000 }));
      expect(built.tables[0]).toMatchObject({ schema: 'tenant_4', name: 'orders_3' });
      const { folder, index } = folderOf(dir);
      expect(derived(folder)).toHaveLength(1);

      // Only tenant_1 (where the groups' tables are), public and tenant_4 (the one shown) are needed.
      const needed = ['tenant_1', 'public', 'tenant_4'];
      for (const [schema, entry] of Object.entries(index.schemas))
        if (!needed.includes(schema)) rmSync(join(folder, `${entry.blob}.bin`));
      const indexWritten = statSync(join(folder, 'index.json')).mtimeMs;
      const fresh = new SchemaCache({ dir, logger: silentLogger });
      for (const budgetTokens of [6000, 200]) {
        const loaded = await cachedSchemaContext(fresh, db, scratch.url, QUESTION, { budgetTokens });
        expect(loaded).toEqual(buildSchemaContext(whole, QUESTION, { budgetTokens }));
      }
      fresh.dispose();
      // Nothing was read from the catalog again: the removed blobs are still gone, the index untouched.
      expect(readdirSync(folder).filter((f) => f.endsWith('.bin'))).toHaveLength(needed.length);
      expect(statSync(join(folder, 'index.json')).mtimeMs).toBe(indexWritten);
      first.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds it again after a schema change, and the answer follows the change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-cached-context-ddl-'));
    try {
      const cache = new SchemaCache({ dir, logger: silentLogger });
      await cachedSchemaContext(cache, db, scratch.url, QUESTION, { budgetTokens: 6000 });
      const { folder } = folderOf(dir);
      const before = derived(folder);
      await execSql(scratch.url, 'CREATE TABLE tenant_4.refunds (id int PRIMARY KEY, refund_reason text)');
      await schemaChanges.announce({ connection: scratch.url });
      const question = 'refund reason for tenant 4';
      const after = await cachedSchemaContext(cache, db, scratch.url, question, { budgetTokens: 6000 });
      expect(after.tables[0]).toMatchObject({ schema: 'tenant_4', name: 'refunds' });
      expect(derived(folder).filter((f) => !before.includes(f))).toHaveLength(1);
      const fresh = new SchemaCache({ dir, logger: silentLogger });
      expect(await cachedSchemaContext(fresh, db, scratch.url, question, { budgetTokens: 6000 })).toEqual(after);
      fresh.dispose();
      cache.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
