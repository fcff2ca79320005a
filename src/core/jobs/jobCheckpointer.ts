/**
 * Where a job's graph checkpoints live. Alone: files under .pgagent/checkpoints/. In team mode
 * (`team.databaseUrl`): LangGraph's PostgreSQL checkpointer in a `pgagent` schema of the team database, so a
 * job started in one clone of a repository (its folder travels with the repository) can be continued from
 * another; the lease then lives in Redis (leaseBackends.ts), which team mode expects.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { FileCheckpointSaver } from '../ask/fileCheckpointer';
import { parseConnectionUrl } from '../db/connectionTarget';
import { connectionError } from '../db/dbErrors';
import type { Logger } from '../platform/logger';

export const TEAM_SCHEMA = 'pgagent';

export interface JobCheckpointer {
  saver: BaseCheckpointSaver;
  kind: 'files' | 'team';
  close(): Promise<void>;
}

export async function openJobCheckpointer(options: {
  teamDatabaseUrl?: string | undefined;
  checkpointsDir: string;
  logger: Logger;
}): Promise<JobCheckpointer> {
  const url = options.teamDatabaseUrl?.trim();
  if (!url)
    return { saver: new FileCheckpointSaver(options.checkpointsDir), kind: 'files', close: () => Promise.resolve() };
  const target = parseConnectionUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5000 });
  pool.on('error', (error) => options.logger.warn('team checkpoint connection error', { error: error.message }));
  const saver = new PostgresSaver(pool, undefined, { schema: TEAM_SCHEMA });
  try {
    // setup() is not safe to run from two processes at once (both insert the same migration): serialize it.
    const client = await pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtext('pgagent.checkpoints.setup'))");
      await saver.setup();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext('pgagent.checkpoints.setup'))").catch(() => undefined);
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw connectionError(error, target);
  }
  options.logger.debug('job checkpoints in the team database', { schema: TEAM_SCHEMA });
  return { saver, kind: 'team', close: () => pool.end() };
}
