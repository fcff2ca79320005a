// What the Schema tree reads of the schema cache: the schemas and their counts from the index, every table's name
// from the schemas' table directories alone (Find Table…), one schema's tables when it is expanded — asserted on
// the bytes a fresh process reads, against the whole blobs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const SCHEMAS = ['s1', 's2', 's3'];
const TABLES = 60;

describe.runIf(postgresAvailable)('the schema cache read by schema, for the Schema tree', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let dir: string;
  const key = 'tree50k-names';

  beforeAll(async () => {
    scratch = await createScratchDatabase('tree50k_names');
    const ddl = SCHEMAS.flatMap((s) => [
      `CREATE SCHEMA ${s};`,
      ...Array.from(
        { length: TABLES },
        (_, i) => `CREATE TABLE ${s}.t${i} (id int PRIMARY KEY, name text NOT NULL, note text, amount numeric(10,2));`,
      ),
    ]);
    await execSql(scratch.url, ddl.join('\n'));
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    dir = mkdtempSync(join(tmpdir(), 'tree50k-names-'));
    const first = new SchemaCache({ dir, logger: silentLogger });
    await first.get(db, key);
    first.dispose();
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a fresh process lists every table name reading the directories only, far less than the schemas', async () => {
    const names = new SchemaCache({ dir, logger: silentLogger });
    const whole = new SchemaCache({ dir, logger: silentLogger });
    try {
      const listed = await names.tableNames(db, key);
      expect(listed.map((s) => s.schema)).toEqual(expect.arrayContaining(SCHEMAS));
      for (const s of SCHEMAS) {
        expect(listed.find((l) => l.schema === s)?.names.sort()).toEqual(
          Array.from({ length: TABLES }, (_, i) => `t${i}`).sort(),
        );
      }
      const snapshot = (await whole.get(db, key)).snapshot;
      expect(snapshot.tables.filter((t) => SCHEMAS.includes(t.schema))).toHaveLength(SCHEMAS.length * TABLES);
      // The names cost the index and the directories; the whole schema reads every blob in full.
      expect(names.bytesRead(key)).toBeLessThan(whole.bytesRead(key) / 2);
    } finally {
      names.dispose();
      whole.dispose();
    }
  });

  it('the schemas come with their counts; one schema decodes alone; names already decoded are not read again', async () => {
    const cache = new SchemaCache({ dir, logger: silentLogger });
    try {
      const schemas = await cache.schemas(db, key);
      for (const s of SCHEMAS) expect(schemas).toContainEqual({ name: s, tables: TABLES });
      const tables = await cache.tablesOf(db, key, 's2');
      expect(tables).toHaveLength(TABLES);
      const before = cache.bytesRead(key);
      const listed = await cache.tableNames(db, key);
      expect(listed.find((l) => l.schema === 's2')?.names).toEqual(tables.map((t) => t.name));
      // s2 came from its decoded tables: only the other schemas' directories were read.
      expect(cache.bytesRead(key) - before).toBeGreaterThan(0);
    } finally {
      cache.dispose();
    }
  });
});
