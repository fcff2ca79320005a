/** The CLI's Logger: lines on stderr, debug and info only with --verbose so stdout stays clean. */
import type { Logger, LogFields } from '../core/platform/logger';
import { formatLogLine } from '../core/platform/logger';

export function stderrLogger(write: (text: string) => void, verbose: boolean): Logger {
  const line = (level: string) => (message: string, fields?: LogFields) =>
    write(`[${level}] ${formatLogLine(message, fields)}\n`);
  const quiet = () => undefined;
  return {
    trace: verbose ? line('trace') : quiet,
    debug: verbose ? line('debug') : quiet,
    info: verbose ? line('info') : quiet,
    warn: line('warn'),
    error: line('error'),
  };
}
