/**
 * A throwaway PostgreSQL 15 cluster of a test's own (initdb into a temp folder, trust on loopback, a port
 * reserved for it), which the test may stop and start again: an upstream restart under a guard, or more
 * connections than the machine's shared server allows. Same tools and owner rule as testCluster.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { BIN, clusterToolsAvailable, reservePort, runAsClusterOwner } from './testCluster';

export interface PlainCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  /** pg_ctl stop: 'fast' ends every session with 57P01 (as an administrator's restart does). */
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  /** Stops for good and removes the folder. */
  destroy(): void;
}

export { clusterToolsAvailable };

export async function startPlainCluster(options: { maxConnections?: number } = {}): Promise<PlainCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-plain-cluster-'));
  const dir = path.join(root, 'data');
  fs.chmodSync(root, 0o755);
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', root]);
  runAsClusterOwner(path.join(BIN, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  // Reserved until destroy(): no other test file's server takes it while this one is stopped.
  const { port, release } = await reservePort();
  fs.appendFileSync(
    path.join(dir, 'postgresql.conf'),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${root}'`,
      'fsync = off',
      'shared_buffers = 16MB',
      `max_connections = ${options.maxConnections ?? 20}`,
      '',
    ].join('\n'),
  );
  const ctl = (args: string[]) => runAsClusterOwner(path.join(BIN, 'pg_ctl'), ['-D', dir, '-w', ...args]);
  const start = () => ctl(['-l', path.join(root, 'log'), '-o', '-c log_min_messages=warning', 'start']);
  let running = false;
  try {
    start();
  } catch (error) {
    release();
    throw error;
  }
  running = true;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop(mode = 'fast') {
      ctl(['-m', mode, 'stop']);
      running = false;
    },
    start() {
      start();
      running = true;
    },
    destroy() {
      try {
        if (running) ctl(['-m', 'immediate', 'stop']);
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
        release();
      }
    },
  };
}
