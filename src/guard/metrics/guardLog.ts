/**
 * Where the guard's log goes (`pg-agent guard --log-format json|text --log-file FILE`): stderr, or appended to a
 * file. The lines themselves are core/platform/logger.ts's (`lineLogger`, `jsonLine`: one JSON object per line
 * with `time`, `level` and `msg` or `event`). What the guard logs of a statement is who sent it and what became
 * of it (guardEvents.ts), never its text, parameter values or a password.
 */
import { createWriteStream } from 'node:fs';

export interface LogSink {
  line(text: string): void;
  close(): Promise<void>;
}

/** Lines appended to a file (created 0600: a log names users, clients and tickets). */
export function fileSink(path: string): LogSink {
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  stream.on('error', () => undefined);
  return {
    line: (text) => void stream.write(`${text}\n`),
    close: () => new Promise((resolve) => stream.end(() => resolve())),
  };
}

export function streamSink(write: (text: string) => void): LogSink {
  return { line: (text) => write(`${text}\n`), close: () => Promise.resolve() };
}
