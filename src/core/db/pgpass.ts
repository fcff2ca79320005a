/**
 * libpq's password file (`~/.pgpass`, PGPASSFILE, or a `passfile` option): host:port:database:user:password
 * lines, `*` matching anything, `\:` and `\\` escapes, the first matching line wins, and a file that its
 * group or others can read is ignored with a warning, as libpq does.
 *
 * `pg` has its own lookup (the `pgpass` module) but only when no password is given at all, reading
 * process.env and writing warnings to process.stderr, and it is deprecated (gone in pg 9): the one lookup
 * is here, with the environment and logger of the caller.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isErrno } from '../fs/errno';
import type { Env } from './conninfo';

export interface PgpassKey {
  host: string;
  port: number;
  database: string;
  user: string;
}

export type PgpassLookup =
  { found: true; password: string; file: string } | { found: false; file: string; warning?: string };

/** The file libpq would read: the `passfile` option, else PGPASSFILE, else ~/.pgpass (%APPDATA%\postgresql\pgpass.conf on Windows). */
export function pgpassFileName(env: Env, passfile?: string, platform = process.platform): string {
  if (passfile) return passfile;
  if (env.PGPASSFILE) return env.PGPASSFILE;
  if (platform === 'win32') return path.join(env.APPDATA ?? os.homedir(), 'postgresql', 'pgpass.conf');
  return path.join(env.HOME ?? os.homedir(), '.pgpass');
}

/** Looks the password of `key` up in the password file; a missing file is no password, not an error. */
export function lookupPgpass(key: PgpassKey, env: Env, passfile?: string): PgpassLookup {
  const file = pgpassFileName(env, passfile);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return { found: false, file };
    return { found: false, file, warning: `password file "${file}" cannot be read: ${(error as Error).message}` };
  }
  if (!stat.isFile()) return { found: false, file, warning: `password file "${file}" is not a plain file` };
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    return {
      found: false,
      file,
      warning: `password file "${file}" has group or world access; permissions should be u=rw (0600) or less`,
    };
  }
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    return { found: false, file, warning: `password file "${file}" cannot be read: ${(error as Error).message}` };
  }
  const password = matchPgpass(text, key);
  return password === undefined ? { found: false, file } : { found: true, password, file };
}

/** The password of the first line matching `key`, as libpq matches (an empty password counts as none). */
export function matchPgpass(text: string, key: PgpassKey): string | undefined {
  // libpq matches a Unix-socket connection to the default directory, and no host at all, as "localhost".
  const host = key.host === '' || key.host.startsWith('/') ? 'localhost' : key.host;
  const wanted = [host, String(key.port), key.database, key.user];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const fields = splitLine(line);
    if (!fields) continue;
    if (wanted.every((value, i) => fields[i] === '*' || fields[i] === value)) {
      const password = fields[4] ?? '';
      return password === '' ? undefined : password;
    }
  }
  return undefined;
}

/** Four `:`-separated fields then the password (the rest of the line), with `\:` and `\\` unescaped; undefined for a short line. */
function splitLine(line: string): string[] | undefined {
  const fields: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i];
    if (ch === '\\' && i + 1 < line.length) {
      current += line[i + 1];
      i += 1;
    } else if (ch === ':' && fields.length < 4) {
      fields.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (fields.length < 4) return undefined;
  fields.push(current);
  return fields;
}
