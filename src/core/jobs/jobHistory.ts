/**
 * A git history of one job folder, kept apart from the user's repository: the gitdir is
 * `<job>/.history` and the worktree is the job folder, so the review chat can show how the plan changed.
 *
 * Why isomorphic-git: it is pure JavaScript, so it runs inside VS Code's extension host (no native
 * addons) and on machines without a `git` binary, and because we pass our own gitdir it never reads or
 * writes the user's repository, its config, hooks or index.
 */
import * as fs from 'node:fs';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { AgentError } from '../platform/errors';
import type { HistoryAuthor } from './historySnapshot';
import { commitSnapshot } from './historySnapshot';
import { settled } from '../fs/atomicWrite';
import { unifiedDiff } from './lineDiff';

export const HISTORY_DIR = '.history';

export interface HistoryEntry {
  oid: string;
  message: string;
  time: Date;
}

const DEFAULT_AUTHOR: HistoryAuthor = { name: 'Postgres Agent', email: 'agent@pgagent.invalid' };

function repo(jobDir: string): { fs: typeof fs; dir: string; gitdir: string } {
  return { fs, dir: jobDir, gitdir: join(jobDir, HISTORY_DIR) };
}

/** Creates the history if it does not exist yet (idempotent; one stat when it does). */
export async function initHistory(jobDir: string): Promise<void> {
  const r = repo(jobDir);
  if (existsSync(join(r.gitdir, 'HEAD'))) return;
  await git.init({ ...r, defaultBranch: 'main' });
  // The gitdir lives inside its own worktree: exclude it, for anyone who runs real git in the folder.
  await mkdir(join(r.gitdir, 'info'), { recursive: true });
  await writeFile(join(r.gitdir, 'info', 'exclude'), `/${HISTORY_DIR}/\n`, 'utf8');
}

async function headOid(jobDir: string): Promise<string | undefined> {
  try {
    return await git.resolveRef({ ...repo(jobDir), ref: 'HEAD' });
  } catch (error) {
    if (error instanceof git.Errors.NotFoundError) return undefined;
    throw error;
  }
}

/**
 * Commits the job folder as it is now (new, changed and deleted files). When nothing changed, returns
 * the current head instead of making an empty commit. See historySnapshot.ts for why this does not go
 * through isomorphic-git's index.
 */
export function commitAll(jobDir: string, message: string, options: { author?: HistoryAuthor } = {}): Promise<string> {
  const r = repo(jobDir);
  return settled(() => commitSnapshot(r.dir, r.gitdir, message, options.author ?? DEFAULT_AUTHOR));
}

/** The newest commits first. */
export async function log(jobDir: string, options: { limit?: number } = {}): Promise<HistoryEntry[]> {
  if ((await headOid(jobDir)) === undefined) return [];
  const entries = await git.log({ ...repo(jobDir), ...(options.limit !== undefined ? { depth: options.limit } : {}) });
  return entries.map((entry) => ({
    oid: entry.oid,
    message: entry.commit.message.trimEnd(),
    time: new Date(entry.commit.author.timestamp * 1000),
  }));
}

async function resolveCommit(jobDir: string, oid: string): Promise<string> {
  if (!/^[0-9a-f]{4,40}$/.test(oid))
    throw new AgentError(
      'BAD_INPUT',
      `"${oid.slice(0, 60)}" is not a commit id.`,
      'Take the id from the job history log.',
    );
  try {
    return await git.expandOid({ ...repo(jobDir), oid });
  } catch (error) {
    throw new AgentError(
      'BAD_INPUT',
      `The job history has no commit ${oid}.`,
      'Take the id from the job history log.',
      { cause: error },
    );
  }
}

/** A file's text at a commit, or undefined when the file did not exist in that commit. */
async function textAt(jobDir: string, oid: string, path: string): Promise<string | undefined> {
  const commit = await resolveCommit(jobDir, oid);
  try {
    const { blob } = await git.readBlob({ ...repo(jobDir), oid: commit, filepath: path });
    return new TextDecoder().decode(blob);
  } catch (error) {
    if (error instanceof git.Errors.NotFoundError) return undefined;
    throw error;
  }
}

/** The text of `path` (relative to the job folder, with `/`) as committed in `oid`. */
export async function show(jobDir: string, oid: string, path: string): Promise<string> {
  const text = await textAt(jobDir, oid, path);
  if (text === undefined) throw new AgentError('BAD_INPUT', `${path} did not exist in commit ${oid.slice(0, 7)}.`);
  return text;
}

/** A unified diff of one file between two commits ('' when unchanged; a missing side counts as empty). */
export async function diff(jobDir: string, fromOid: string, toOid: string, path: string): Promise<string> {
  const before = await textAt(jobDir, fromOid, path);
  const after = await textAt(jobDir, toOid, path);
  if (before === undefined && after === undefined) {
    throw new AgentError(
      'BAD_INPUT',
      `${path} exists in neither commit ${fromOid.slice(0, 7)} nor ${toOid.slice(0, 7)}.`,
    );
  }
  return unifiedDiff(before ?? '', after ?? '', {
    from: before === undefined ? '/dev/null' : `a/${path} (${fromOid.slice(0, 7)})`,
    to: after === undefined ? '/dev/null' : `b/${path} (${toOid.slice(0, 7)})`,
  });
}
