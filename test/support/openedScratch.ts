/**
 * A scratch database made with a test's own SQL, a Db on it and its schema snapshot, for a test that declares
 * them itself (`useShopDatabase` in shopDatabase.ts registers the same for the shop schema).
 */
import { parseConnectionUrl } from '../../src/core/db/connectionTarget';
import type { Db } from '../../src/core/db/db';
import { introspectSchema } from '../../src/core/db/introspect';
import { openPostgres } from '../../src/core/db/postgresDb';
import { silentLogger } from '../../src/core/platform/logger';
import type { SchemaSnapshot } from '../../src/shared/schema';
import type { ScratchDatabase } from './scratchDatabase';
import { createScratchDatabase, execSql } from './scratchDatabase';

export interface OpenedScratch {
  scratch: ScratchDatabase;
  db: Db;
  snapshot: SchemaSnapshot;
}

/** `sql` run in a new scratch database, then a Db opened on it (nothing logged) and its schema read once. */
export async function openScratch(sql: string): Promise<OpenedScratch> {
  const scratch = await createScratchDatabase();
  await execSql(scratch.url, sql);
  const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  return { scratch, db, snapshot: await db.withSession((session) => introspectSchema(session)) };
}

/** The Db closed and the database dropped (either may be missing when the set-up failed half-way). */
export async function closeScratch(opened: Partial<OpenedScratch> | undefined): Promise<void> {
  await opened?.db?.close();
  await opened?.scratch?.drop();
}
