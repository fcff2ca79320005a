/**
 * The DBA tools' own PostgreSQL 15 cluster (started by .ci/dba-cluster.sh: port 5440, pg_stat_statements
 * preloaded, hypopg installed). Under CI=true an unreachable cluster fails the run; elsewhere its tests skip loudly.
 */
import net from 'node:net';

import type { ScratchDatabase } from './scratchDatabase';
import { createScratchDatabase } from './scratchDatabase';

export const DBA_DATABASE_URL = process.env.DBA_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5440/postgres';

async function reachable(url: string): Promise<string | undefined> {
  const parsed = new URL(url);
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 5432);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (problem: string | undefined) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(3000, () => done(`${host}:${port} timed out`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (error) => done(`${host}:${port}: ${error.message}`));
  });
}

const problem = await reachable(DBA_DATABASE_URL);
if (problem !== undefined) {
  const line = `the DBA test cluster is unreachable (${problem}); run .ci/dba-cluster.sh or set DBA_DATABASE_URL.`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${line}`);
  console.warn(`\n!!!!! SKIPPING DBA integration tests: ${line}\n`);
}

export const dbaClusterAvailable = problem === undefined;

/** A scratch database on the DBA cluster, dropped by the caller. */
export function createDbaScratch(): Promise<ScratchDatabase> {
  return createScratchDatabase('pgagent_dba', DBA_DATABASE_URL);
}
