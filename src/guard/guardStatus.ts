/**
 * What a running guard tells `pg-agent guard status`: `.pgagent/guard/status.json`, rewritten (atomically)
 * whenever a client comes, goes or gets a statement held; removed when the guard stops. A file left by a
 * guard that died is recognised by its pid.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { writeFileAtomic } from '../core/fs/atomicWrite';
import { isErrno } from '../core/fs/errno';
import { processAlive } from '../core/fs/processAlive';
import type { GuardClientInfo } from './guardServer';
import { guardDir } from './guardUsers';

export interface GuardStatus {
  pid: number;
  /** postgresql://host:port/database, without a user: what clients connect to. */
  listen: string;
  /** The upstream as a person reads it (no password). */
  upstream: string;
  startedAt: string;
  clients: GuardClientInfo[];
}

export function statusFile(workspaceDir: string): string {
  return join(guardDir(workspaceDir), 'status.json');
}

export async function writeGuardStatus(workspaceDir: string, status: GuardStatus): Promise<void> {
  await mkdir(guardDir(workspaceDir), { recursive: true, mode: 0o700 });
  await writeFileAtomic(statusFile(workspaceDir), `${JSON.stringify(status, null, 2)}\n`);
}

export async function removeGuardStatus(workspaceDir: string): Promise<void> {
  await rm(statusFile(workspaceDir), { force: true });
}

/** The running guard's status; undefined when none runs for this workspace (or its file is a dead guard's). */
export async function readGuardStatus(workspaceDir: string): Promise<{ status: GuardStatus; running: boolean } | undefined> {
  let text: string;
  try {
    text = await readFile(statusFile(workspaceDir), 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  const status = JSON.parse(text) as GuardStatus;
  return { status, running: processAlive(status.pid) };
}
