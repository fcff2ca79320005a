/**
 * One side of `pg-agent diff`: a snapshot file (an existing file's path), a connection profile of the workspace
 * (its name), or a database (URL, libpq string, "sample"), opened the way the command's own database is.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connectionKey, resolveTarget } from '../../core/db/connectionTarget';
import type { Db } from '../../core/db/db';
import { openDatabase } from '../../core/db/openDatabase';
import { readWorkspaceConfig, workspacePaths } from '../../core/config/workspace';
import { readDiffSnapshot } from '../../core/diff/diffCatalog';
import type { DiffSnapshot } from '../../core/diff/diffSnapshot';
import { parseSnapshotFile } from '../../core/diff/diffSnapshot';
import type { CommandContext } from '../command';

export type DiffSource =
  | { kind: 'file'; path: string; snapshot: DiffSnapshot }
  | { kind: 'database'; db: Db; connection: string; label: string; snapshot: DiffSnapshot };

export async function openDiffSource(context: CommandContext, spec: string): Promise<DiffSource> {
  if (existsSync(spec) && statSync(spec).isFile())
    return { kind: 'file', path: spec, snapshot: parseSnapshotFile(await readFile(spec, 'utf8'), spec) };
  const paths = workspacePaths(context.args.flags.workspace);
  const config = await readWorkspaceConfig(paths);
  const profiles = config.connections;
  const isProfile = profiles?.some((p) => p.name === spec) ?? false;
  const target = resolveTarget({ ...(isProfile ? { profile: spec } : { db: spec }), profiles, env: context.io.env });
  const db = await openDatabase(target, {
    ...context.connectOptions(),
    sampleDbDir: paths.sampleDb,
    sampleDbHeldBy: 'pg-agent diff',
  });
  try {
    const snapshot = await db.withSession((session) => readDiffSnapshot(session));
    return { kind: 'database', db, connection: connectionKey(target, paths.sampleDb), label: db.label, snapshot };
  } catch (error) {
    await db.close();
    throw error;
  }
}
