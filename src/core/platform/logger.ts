/** The logging port of core: a LogOutputChannel in VS Code, stderr in the CLI, silence in tests. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export const silentLogger: Logger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** "message key=value key=value" with the undefined fields left out. */
export function formatLogLine(message: string, fields?: LogFields): string {
  if (!fields) return message;
  const parts = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${String(value)}`);
  return parts.length === 0 ? message : `${message} ${parts.join(' ')}`;
}

/** How a log line is written: `[level] message key=value`, or one JSON object (`time`, `level`, then the fields). */
export type LogFormat = 'text' | 'json';

/** One JSON log line; undefined fields are left out. */
export function jsonLine(level: string, fields: LogFields): string {
  return JSON.stringify({ time: new Date().toISOString(), level, ...fields });
}

/**
 * The Logger of a process that logs lines (the CLI on stderr, the guard on stderr or its log file): `writeLine`
 * takes each line without its end; trace, debug and info only when verbose.
 */
export function lineLogger(format: LogFormat, writeLine: (line: string) => void, verbose: boolean): Logger {
  const line = (level: string) => (message: string, fields?: LogFields) =>
    writeLine(
      format === 'json' ? jsonLine(level, { msg: message, ...fields }) : `[${level}] ${formatLogLine(message, fields)}`,
    );
  const quiet = () => undefined;
  return {
    trace: verbose ? line('trace') : quiet,
    debug: verbose ? line('debug') : quiet,
    info: verbose ? line('info') : quiet,
    warn: line('warn'),
    error: line('error'),
  };
}
