/** A Logger that keeps every line it is given (any level), for a test to read back. */
import type { LogFields, Logger } from '../../src/core/platform/logger';

export interface RecordingLogger extends Logger {
  lines: { message: string; fields?: LogFields }[];
  /** The messages alone, in order. */
  messages(): string[];
}

export function recordingLogger(): RecordingLogger {
  const lines: { message: string; fields?: LogFields }[] = [];
  const record = (message: string, fields?: LogFields): void => {
    lines.push(fields === undefined ? { message } : { message, fields });
  };
  return {
    lines,
    messages: () => lines.map((l) => l.message),
    trace: record,
    debug: record,
    info: record,
    warn: record,
    error: record,
  };
}
