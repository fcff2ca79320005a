/**
 * Files of a job folder the panel may open (openJobFile): the path comes from the webview, so it is
 * checked again here, against the real paths on disk, before an editor opens it.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { isInside } from '../../../core/fs/isInside';

export type JobFileCheck = { ok: true; path: string } | { ok: false; reason: string };

/** Strictly below `root`: the job folder itself is not a file to open. */
function inside(root: string, path: string): boolean {
  return relative(root, path) !== '' && isInside(root, path);
}

/** The absolute path of an existing regular file inside `jobDir` (symlinks resolved), or why not. */
export async function resolveJobFile(jobDir: string, relativePath: string): Promise<JobFileCheck> {
  if (
    relativePath === '' ||
    relativePath.includes('\0') ||
    isAbsolute(relativePath) ||
    /^[a-zA-Z]:/.test(relativePath)
  ) {
    return { ok: false, reason: 'not a relative path' };
  }
  if (relativePath.split(/[\\/]+/).some((part) => part === '..'))
    return { ok: false, reason: 'the path climbs out with ".."' };
  const clean = normalize(relativePath);
  if (clean.split(sep)[0] === '.history') return { ok: false, reason: 'the job history is not a file to open' };
  const candidate = join(jobDir, clean);
  if (!inside(jobDir, candidate)) return { ok: false, reason: 'outside the job folder' };
  try {
    const [realDir, realFile] = await Promise.all([realpath(jobDir), realpath(candidate)]);
    if (!inside(realDir, realFile)) return { ok: false, reason: 'it links outside the job folder' };
    if (!(await stat(realFile)).isFile()) return { ok: false, reason: 'not a file' };
    return { ok: true, path: realFile };
  } catch {
    return { ok: false, reason: 'no such file' };
  }
}

/** The job's sql/*.sql files and their text (for linking todos to their SQL); unreadable ones are skipped. */
export async function readSqlFiles(jobDir: string, limit = 200): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const entries = await readdir(join(jobDir, 'sql'), { withFileTypes: true }).catch(() => []);
  // Regular files only: a link could point anywhere.
  const names = entries.filter((e) => e.isFile() && e.name.endsWith('.sql')).map((e) => e.name);
  for (const name of names.sort().slice(0, limit)) {
    const text = await readFile(join(jobDir, 'sql', name), 'utf8').catch(() => undefined);
    if (text !== undefined && text.length <= 200_000) files.set(`sql/${name}`, text);
  }
  return files;
}
