/**
 * libpq's connection service file: `[name]` sections of keyword=value lines, looked up as libpq does
 * (PGSERVICEFILE or ~/.pg_service.conf first, then PGSYSCONFDIR/pg_service.conf), so `service=prod`
 * means here what it means to psql.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentError } from '../platform/errors';
import { isErrno } from '../fs/errno';
import type { ConnParams, Env } from './conninfo';
import { parseKeywordValue } from './conninfo';

/** Debian's libpq is built with this SYSCONFDIR; PGSYSCONFDIR overrides it as in libpq. */
const DEFAULT_SYSCONFDIR = '/etc/postgresql-common';

/** The files libpq reads for a service, in its order. */
export function serviceFilePaths(env: Env, home = os.homedir()): string[] {
  const user = env.PGSERVICEFILE ?? path.join(env.HOME ?? home, '.pg_service.conf');
  return [user, path.join(env.PGSYSCONFDIR ?? DEFAULT_SYSCONFDIR, 'pg_service.conf')];
}

/** The parameters of service `name`; a clear error when no file defines it. */
export function readService(name: string, env: Env): ConnParams {
  const files = serviceFilePaths(env);
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) continue;
      throw new AgentError(
        'CONFIG_INVALID',
        `Cannot read the service file ${file}: ${(error as Error).message}.`,
        'Check its permissions, or point PGSERVICEFILE at another file.',
      );
    }
    const found = serviceInText(text, name, file);
    if (found) return found;
  }
  throw new AgentError(
    'CONFIG_INVALID',
    `No definition of service "${name}" in ${files.join(' or ')}.`,
    'Add a [' + name + '] section to one of them, or set PGSERVICEFILE to the file that has it.',
  );
}

/** One service's keyword=value lines from a file's text, or undefined when it has no such section. */
export function serviceInText(text: string, name: string, file: string): ConnParams | undefined {
  let inGroup = false;
  let found: ConnParams | undefined;
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const section = /^\[(.*)\]$/.exec(line);
    if (section) {
      if (found) return found;
      inGroup = section[1] === name;
      if (inGroup) found = {};
      continue;
    }
    if (!inGroup || !found) continue;
    const eq = line.indexOf('=');
    if (eq <= 0)
      throw new AgentError(
        'CONFIG_INVALID',
        `Syntax error in service file ${file}, line ${index + 1}: expected keyword=value.`,
        'Each line of a service is keyword=value, e.g. host=db.example.com.',
      );
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (key === 'service') {
      throw new AgentError(
        'CONFIG_INVALID',
        `Service "${name}" in ${file} names another service (line ${index + 1}); nested services are not supported (libpq refuses them too).`,
        'Copy the settings of that service into this one.',
      );
    }
    // Values are taken whole: a service file's value runs to the end of its line.
    Object.assign(
      found,
      parseKeywordValue(
        `${key}='${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`,
        `service file ${file}, line ${index + 1}`,
      ),
    );
  }
  return found;
}
