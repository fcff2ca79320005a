/**
 * libpq's two spellings of a connection, read into one map of keywords: keyword/value strings
 * (`host=db port=5432 service=prod`, values optionally in single quotes with backslash escapes) and URLs
 * (`postgresql://user@host/db?sslmode=verify-full&service=prod`). Pure: no disk, no network.
 */
import { AgentError } from '../platform/errors';

/** The libpq keywords we honour; any other is refused by name, never silently dropped. */
export const CONN_KEYWORDS = [
  'host',
  'port',
  'dbname',
  'user',
  'password',
  'passfile',
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'service',
] as const;
export type ConnKeyword = (typeof CONN_KEYWORDS)[number];
export type ConnParams = Partial<Record<ConnKeyword, string>>;

/** Environment variables as read (process.env, or a test's own). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Keywords libpq knows that change nothing we could honour here; accepted so existing files keep working. */
const IGNORED_KEYWORDS = new Set([
  'application_name',
  'fallback_application_name',
  'connect_timeout',
  'client_encoding',
  'keepalives',
  'keepalives_idle',
  'keepalives_interval',
  'keepalives_count',
]);

/** True when `text` is a keyword/value connection string rather than a URL or "sample". */
export function isKeywordValueString(text: string): boolean {
  return !/^postgres(ql)?:\/\//i.test(text) && /^\s*[A-Za-z_]+\s*=/.test(text);
}

/** Reads `key=value key='quoted \' value'` as libpq does. */
export function parseKeywordValue(text: string, source = 'the connection string'): ConnParams {
  const params: ConnParams = {};
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i] ?? '')) i += 1;
  };
  for (;;) {
    skipSpace();
    if (i >= text.length) return params;
    const keyStart = i;
    while (i < text.length && /[A-Za-z0-9_]/.test(text[i] ?? '')) i += 1;
    const key = text.slice(keyStart, i);
    skipSpace();
    if (key === '' || text[i] !== '=') {
      throw new AgentError(
        'CONFIG_INVALID',
        `Cannot read ${source}: expected keyword=value at "${text.slice(keyStart, keyStart + 20)}".`,
        'Write it as host=db.example.com dbname=shop, or service=NAME.',
      );
    }
    i += 1;
    skipSpace();
    let value = '';
    if (text[i] === "'") {
      i += 1;
      for (;;) {
        if (i >= text.length)
          throw new AgentError(
            'CONFIG_INVALID',
            `Cannot read ${source}: unterminated quoted value of "${key}".`,
            "Close the value with a single quote; write \\' for a quote inside it.",
          );
        const ch = text[i] ?? '';
        if (ch === '\\' && i + 1 < text.length) {
          value += text[i + 1];
          i += 2;
        } else if (ch === "'") {
          i += 1;
          break;
        } else {
          value += ch;
          i += 1;
        }
      }
    } else {
      while (i < text.length && !/\s/.test(text[i] ?? '')) {
        if (text[i] === '\\' && i + 1 < text.length) i += 1;
        value += text[i];
        i += 1;
      }
    }
    setParam(params, key, value, source);
  }
}

/** Reads a postgres:// URL: user, password, host, port and database from its parts, the rest from its query. */
export function parseUrlParams(url: string): ConnParams {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl(url, 'it is not a URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw invalidUrl(url, `the scheme is "${parsed.protocol}", not postgres:`);
  }
  const params: ConnParams = {};
  const decode = (value: string) => {
    try {
      return decodeURIComponent(value);
    } catch {
      throw invalidUrl(url, `"${value}" is not valid percent-encoding`);
    }
  };
  if (parsed.username) params.user = decode(parsed.username);
  if (parsed.password) params.password = decode(parsed.password);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host) params.host = host;
  if (parsed.port) params.port = parsed.port;
  const database = decode(parsed.pathname.replace(/^\//, ''));
  if (database) params.dbname = database;
  for (const [key, value] of parsed.searchParams) setParam(params, key, value, 'the URL');
  return params;
}

function setParam(params: ConnParams, key: string, value: string, source: string): void {
  if (IGNORED_KEYWORDS.has(key)) return;
  const keyword = CONN_KEYWORDS.find((k) => k === key);
  if (!keyword) {
    throw new AgentError(
      'CONFIG_INVALID',
      `Unknown connection option "${key}" in ${source}.`,
      `Supported: ${CONN_KEYWORDS.join(', ')}.`,
    );
  }
  params[keyword] = value;
}

export function invalidUrl(url: string, why: string): AgentError {
  const shown = url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  return new AgentError(
    'CONFIG_INVALID',
    `Cannot use "${shown}" as a database URL: ${why}.`,
    'Write it as postgres://user:password@host:5432/database, or service=NAME for an entry of pg_service.conf.',
  );
}
