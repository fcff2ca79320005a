/**
 * What a client may ask for at start-up. The guard serves one database, never a replication connection,
 * and forwards only the parameters that shape output (FORWARDED_PARAMETERS); `options`, `search_path` and
 * anything else that would change how the upstream reads or resolves SQL are refused with a clear error,
 * so the session the guard judges for is the session that runs.
 */
import { BackendError } from 'pg-gateway';
import type { ClientParameters } from 'pg-gateway';
import { FORWARDED_PARAMETERS } from './upstream';

const ACCEPTED_ENCODINGS = new Set(['utf8', 'unicode', 'sqlascii']);
/** Values that cannot smuggle another `-c` into the upstream's options. */
const SAFE_VALUE = /^[\w ,+\-:/.]{0,64}$/;

/** The parameters to forward upstream, or the FATAL the client gets (pg-gateway sends a thrown BackendError). */
export function checkStartup(parameters: ClientParameters, database: string): Record<string, string> | BackendError {
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(parameters)) {
    if (name === 'user') continue;
    if (name === 'database') {
      if (value !== database)
        return fatal('3D000', `database "${value}" is not served by this guard (it serves "${database}")`);
    } else if (name === 'client_encoding') {
      if (!ACCEPTED_ENCODINGS.has(value.toLowerCase().replace(/[-_]/g, '')))
        return fatal('22023', `client_encoding ${value} is not supported by the guard: it reads SQL as UTF8`);
    } else if ((FORWARDED_PARAMETERS as readonly string[]).includes(name)) {
      if (!SAFE_VALUE.test(value)) return fatal('22023', `invalid value for ${name}`);
      forwarded[name] = value;
    } else if (name === 'replication') {
      return fatal('0A000', 'replication connections do not pass through the guard');
    } else if (name === 'options' && pinnedAnyway(value)) {
      // Empty, or only what the guard sets on every upstream session itself (pg-agent's own clients ask for it).
      continue;
    } else {
      return fatal(
        '0A000',
        `start-up parameter "${name}" is not forwarded by the guard (it would change how the database reads SQL for this session)`,
      );
    }
  }
  return forwarded;
}

/** `-c` settings the guard's upstream session has whatever the client asks (upstream.ts): nothing to forward. */
const PINNED = new Set(['standard_conforming_strings=on', 'client_encoding=utf8']);

function pinnedAnyway(options: string): boolean {
  const words = options.trim().split(/\s+/).filter(Boolean);
  for (let i = 0; i < words.length; i += 2) {
    if (words[i] !== '-c' || !PINNED.has((words[i + 1] ?? '').toLowerCase())) return false;
  }
  return true;
}

function fatal(code: string, message: string): BackendError {
  return BackendError.create({ severity: 'FATAL', code, message });
}
