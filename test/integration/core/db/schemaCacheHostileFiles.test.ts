// The schema cache's folder is in the workspace, where a cloned repository may have put a symbolic link or a FIFO under
// a cache file's name. The cache reads only plain files: a linked index (a forged one elsewhere) is not believed, the
// catalog is read again and the cache's own file replaces the link (the linked file untouched); a FIFO under the
// stamp's name is not waited on (an open for reading would block until a writer came), the read goes on without it.
import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import type { SchemaIndex } from '../../../../src/core/db/schemaCacheStore';
import type { Logger } from '../../../../src/core/platform/logger';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const WINDOW = 10 * 60_000;

function folderOf(dir: string): string {
  const [folder] = readdirSync(dir);
  if (!folder) throw new Error('no cache folder');
  return join(dir, folder);
}

/** A logger keeping its warnings (message and error text). */
function warningsInto(lines: string[]): Logger {
  return { ...silentLogger, warn: (message, fields) => lines.push(`${message} ${String(fields?.error ?? '')}`) };
}

describe.runIf(postgresAvailable)('schema cache files a cloned repository may have put in place', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      `CREATE SCHEMA b;
       CREATE TABLE b.t1 (id int PRIMARY KEY, name text);
       CREATE TABLE b.t2 (id int PRIMARY KEY, t1_id int REFERENCES b.t1(id), note text);`,
    );
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('does not follow an index that is a symbolic link: the catalog is read again and the link replaced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-hostile-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'pgagent-hostile-elsewhere-'));
    try {
      const filler = new SchemaCache({ dir, logger: silentLogger });
      await filler.get(db, scratch.url);
      filler.dispose();
      const folder = folderOf(dir);
      const index = JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as SchemaIndex;
      // The same index but for the database's name: believed, it would name the database "forged".
      const forged = join(elsewhere, 'index.json');
      writeFileSync(forged, JSON.stringify({ ...index, database: 'forged' }));
      rmSync(join(folder, 'index.json'));
      symlinkSync(forged, join(folder, 'index.json'));

      const warnings: string[] = [];
      const fresh = new SchemaCache({ dir, logger: warningsInto(warnings) });
      const { snapshot, source } = await fresh.get(db, scratch.url);
      fresh.dispose();
      expect(snapshot.database).toBe(scratch.name);
      expect(source).toBe('introspected');
      expect(warnings.join('\n')).toContain('could not read the cache index');
      expect(lstatSync(join(folder, 'index.json')).isSymbolicLink()).toBe(false);
      expect((JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as SchemaIndex).database).toBe(scratch.name);
      expect((JSON.parse(readFileSync(forged, 'utf8')) as SchemaIndex).database).toBe('forged');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('does not wait on a FIFO under the confirmation stamp’s name: the one-table read goes on without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-hostile-fifo-'));
    // A writer that comes late: a read that blocked on the FIFO would be let go by it (and would then find no stamp),
    // so the test ends either way; what tells them apart is whether the cache refused the name.
    let writer: ReturnType<typeof spawn> | undefined;
    try {
      const filler = new SchemaCache({ dir, trustForMs: WINDOW, logger: silentLogger });
      await filler.get(db, scratch.url);
      filler.dispose();
      const stamp = join(folderOf(dir), 'confirmed.json');
      rmSync(stamp);
      execFileSync('mkfifo', [stamp]);
      writer = spawn('sh', ['-c', `sleep 3; printf x > '${stamp}'`], { stdio: 'ignore' });

      const warnings: string[] = [];
      const fresh = new SchemaCache({ dir, trustForMs: WINDOW, logger: warningsInto(warnings) });
      const table = await fresh.table(db, scratch.url, 'b', 't2');
      fresh.dispose();
      expect(table?.columns.map((c) => c.name)).toEqual(['id', 't1_id', 'note']);
      expect(warnings.join('\n')).toMatch(/could not read the confirmation stamp .*not a plain file/);
    } finally {
      writer?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
