/**
 * `pg-agent <command> [flags] [--] <SQL or question>`: the common flags of SPEC §6 plus each command's
 * own. Everything after `--` is text even when it starts with `-`; a lone `-` means "read stdin".
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { suggestion } from './didYouMean';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Flags every command accepts. */
export const COMMON_OPTIONS = {
  db: { type: 'string' },
  connection: { type: 'string' },
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  'no-input': { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  'max-rows': { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpec;

export const COMMON_HELP = `Common flags:
  --db URL            postgres://… URL, a libpq string ("service=prod", "host=h dbname=d"), or "sample"
                      (default: DATABASE_URL, libpq PG* variables and PGSERVICE, else the sample database);
                      a missing password comes from ~/.pgpass (or PGPASSFILE), services from pg_service.conf
  --connection NAME   a connection profile from .pgagent/config.json (password from PGPASSWORD or ~/.pgpass)
  --workspace DIR     folder holding .pgagent/ (default: current directory)
  --json              machine-readable output on stdout
  --no-input          never prompt (writes exit 3 with a ticket)
  --timeout-ms N      statement timeout in milliseconds
  --max-rows N        row cap for results
  -v, --verbose       log what happens to stderr
  -h, --help          this help`;

export interface CommonFlags {
  db?: string;
  connection?: string;
  workspace: string;
  json: boolean;
  noInput: boolean;
  timeoutMs?: number;
  maxRows?: number;
  verbose: boolean;
  help: boolean;
}

export interface ParsedArgs {
  flags: CommonFlags;
  /** The command's own flags, by name. */
  options: Record<string, string | boolean | undefined>;
  /** Positionals joined by spaces; "-" when the text is to be read from stdin. */
  text: string;
  positionals: string[];
}

/** A problem with the command line itself: exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseCommandArgs(argv: readonly string[], commandOptions: OptionSpec, cwd: string): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...COMMON_OPTIONS, ...commandOptions },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(usageMessage(error, { ...COMMON_OPTIONS, ...commandOptions }));
  }
  const v = parsed.values;
  const str = (name: string): string | undefined => {
    const value = v[name];
    return typeof value === 'string' ? value : undefined;
  };
  const flags: CommonFlags = {
    workspace: str('workspace') ?? cwd,
    json: v.json === true,
    noInput: v['no-input'] === true,
    verbose: v.verbose === true,
    help: v.help === true,
  };
  const db = str('db');
  if (db !== undefined) flags.db = db;
  const connection = str('connection');
  if (connection !== undefined) flags.connection = connection;
  const timeoutMs = positiveInt(str('timeout-ms'), '--timeout-ms');
  if (timeoutMs !== undefined) flags.timeoutMs = timeoutMs;
  const maxRows = positiveInt(str('max-rows'), '--max-rows');
  if (maxRows !== undefined) flags.maxRows = maxRows;
  if (flags.db !== undefined && flags.connection !== undefined) {
    throw new UsageError('Use either --db or --connection, not both.');
  }

  const options: ParsedArgs['options'] = {};
  for (const name of Object.keys(commandOptions)) {
    const value = v[name];
    if (typeof value === 'string' || typeof value === 'boolean') options[name] = value;
  }
  return { flags, options, positionals: parsed.positionals, text: parsed.positionals.join(' ') };
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} needs a positive whole number, got "${value}".`);
  }
  return Number(value);
}

/** Node's parser speaks of itself ("To specify a positional argument…"): a person gets the flag and the closest one. */
function usageMessage(error: unknown, options: OptionSpec): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  const known = Object.entries(options).flatMap(([name, spec]) => [
    `--${name}`,
    ...(spec.short !== undefined ? [`-${spec.short}`] : []),
  ]);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag !== undefined)
    return `unknown flag ${flag}${suggestion(flag.split('=')[0] ?? flag, known)}.`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) {
    const name = flag.replace(/^-+/, '');
    const spec = options[name] ?? Object.values(options).find((o) => o.short === name);
    return spec?.type === 'boolean' ? `${flag} takes no value.` : `${flag} needs a value.`;
  }
  return message.split('\n')[0] ?? message;
}
