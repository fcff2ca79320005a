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
