/**
 * The review chat's view of one job folder: listing, reading and full-text search, never outside it.
 * Reads go through JobStore.readFile (its confinement resolves symlinks); listing walks the folder with
 * lstat semantics, so a symlink is shown as a link and never followed, and `.history` is never entered.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { AgentError } from '../platform/errors';
import { isAtomicWriteTemp } from '../fs/atomicWrite';
import { HISTORY_DIR } from '../jobs/jobHistory';
import type { JobStore } from '../jobs/jobStore';

export interface JobFileEntry {
  /** Relative to the job folder, with `/`. */
  path: string;
  kind: 'file' | 'folder' | 'link';
  size: number;
}

export interface SearchHit {
  path: string;
  line: number;
  text: string;
}

/** Logs the chat reads with its own tools (chat.jsonl is already its conversation; audit.jsonl is the debug tier's). */
export const LOG_FILES: ReadonlySet<string> = new Set(['chat.jsonl', 'audit.jsonl']);
const MAX_ENTRIES = 2000;
const MAX_SEARCH_FILE_BYTES = 1_000_000;

function refused(path: string, why: string): AgentError {
  return new AgentError(
    'BAD_INPUT',
    `"${path.slice(0, 120)}" is not a file of this job: ${why}.`,
    'Use a path relative to the job folder, such as plan.md or sql/001-add-index.sql.',
  );
}

/**
 * A path the model gave, checked and normalised to `a/b` ('' for the job folder itself). Refuses absolute
 * paths, drive letters, `..`, NUL and the job history before anything touches the disk.
 */
export function checkJobPath(path: string): string {
  if (path.includes('\0')) throw refused(path, 'the path contains a NUL character');
  const trimmed = path.trim();
  if (isAbsolute(trimmed) || /^[a-zA-Z]:/.test(trimmed) || trimmed.startsWith('/') || trimmed.startsWith('\\'))
    throw refused(path, 'the path is absolute');
  const parts = trimmed.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw refused(path, 'the path climbs out with ".."');
  if (parts[0] === HISTORY_DIR) throw refused(path, 'the job history is read with the git tools, not as files');
  return parts.join('/');
}

/** The folder `path` of the job, reached without passing through any symlink. */
async function folderOf(store: JobStore, jobId: string, path: string): Promise<string> {
  const clean = checkJobPath(path);
  let absolute = store.jobDir(jobId);
  for (const part of clean === '' ? [] : clean.split('/')) {
    absolute = join(absolute, part);
    const stat = await lstat(absolute).catch(() => undefined);
    if (!stat)
      throw new AgentError(
        'BAD_INPUT',
        `Job ${jobId} has no folder ${clean}.`,
        'List the job folder to see what is there.',
      );
    if (stat.isSymbolicLink()) throw refused(path, `${part} is a symbolic link, which the review chat does not follow`);
    if (!stat.isDirectory())
      throw new AgentError('BAD_INPUT', `${clean} is a file, not a folder.`, 'Read it with read_workspace_file.');
  }
  return absolute;
}

/** The job's embeddings for vector_search (`.index/vectors.json`): a cache, not a file of the job. */
export const SEARCH_INDEX_DIR = '.index';

/** Files and folders under `path` (default: the whole job), sorted, skipping `.history`, `.index` and temp files. */
export async function listJobFiles(
  store: JobStore,
  jobId: string,
  path = '',
): Promise<{ entries: JobFileEntry[]; truncated: boolean }> {
  const start = await folderOf(store, jobId, path);
  const base = checkJobPath(path);
  const entries: JobFileEntry[] = [];
  let truncated = false;
  const walk = async (dir: string, rel: string): Promise<void> => {
    let children: Dirent[];
    try {
      children = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // removed while walking
    }
    children.sort((a, b) => a.name.localeCompare(b.name));
    for (const child of children) {
      if (entries.length >= MAX_ENTRIES) {
        truncated = true;
        return;
      }
      const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
      if (childRel === HISTORY_DIR || childRel === SEARCH_INDEX_DIR) continue;
      if (isAtomicWriteTemp(child.name)) continue; // an atomic write in progress
      const absolute = join(dir, child.name);
      // Dirent types come from the directory itself (lstat semantics): a symlink is never followed here.
      if (child.isSymbolicLink()) entries.push({ path: childRel, kind: 'link', size: 0 });
      else if (child.isDirectory()) {
        entries.push({ path: childRel, kind: 'folder', size: 0 });
        await walk(absolute, childRel);
      } else if (child.isFile()) {
        const stat = await lstat(absolute).catch(() => undefined);
        if (stat?.isFile()) entries.push({ path: childRel, kind: 'file', size: stat.size });
      }
    }
  };
  await walk(start, base);
  return { entries, truncated };
}

/** The text of a job file; `.history`, traversal and symlinks out are refused by the store's confinement. */
export async function readJobFile(
  store: JobStore,
  jobId: string,
  path: string,
): Promise<{ path: string; text: string }> {
  const clean = checkJobPath(path);
  if (clean === '')
    throw new AgentError(
      'BAD_INPUT',
      'That is the job folder itself, not a file.',
      'List it with list_workspace_files.',
    );
  const stat = await lstat(join(store.jobDir(jobId), clean)).catch(() => undefined);
  if (stat?.isDirectory())
    throw new AgentError('BAD_INPUT', `${clean} is a folder, not a file.`, 'List it with list_workspace_files.');
  const text = await store.readFile(jobId, clean);
  if (text.includes('\0'))
    throw new AgentError('BAD_INPUT', `${clean} is a binary file; the review chat reads text files only.`);
  return { path: clean, text };
}

/** The text files of the job worth searching (regular files, not links, not the logs, not too big). */
export async function searchableFiles(store: JobStore, jobId: string): Promise<{ path: string; text: string }[]> {
  const { entries } = await listJobFiles(store, jobId);
  const files: { path: string; text: string }[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'file' || LOG_FILES.has(entry.path) || entry.size > MAX_SEARCH_FILE_BYTES) continue;
    const text = await store.readFile(jobId, entry.path).catch(() => undefined);
    if (text !== undefined && !text.includes('\0')) files.push({ path: entry.path, text });
  }
  return files;
}

/** Case-insensitive substring search, line by line; at most `limit` hits plus how many more there were. */
export async function searchJobFiles(
  store: JobStore,
  jobId: string,
  query: string,
  limit: number,
): Promise<{ hits: SearchHit[]; more: number }> {
  const needle = query.trim().toLowerCase();
  if (needle === '') throw new AgentError('BAD_INPUT', 'The search text is empty.');
  const hits: SearchHit[] = [];
  let more = 0;
  for (const file of await searchableFiles(store, jobId)) {
    file.text.split('\n').forEach((line, index) => {
      if (!line.toLowerCase().includes(needle)) return;
      if (hits.length >= limit) more += 1;
      else hits.push({ path: file.path, line: index + 1, text: line.trim().slice(0, 240) });
    });
  }
  return { hits, more };
}
