/**
 * The guard's log as JSON lines (`pg-agent guard --log-format json`), on stderr or appended to `--log-file`:
 * one object per line with `time`, `level` and `msg` or `event`. What the guard logs of a statement is who sent
 * it and what became of it (guardEvents.ts), never its text, parameter values or a password.
 */
import { createWriteStream } from 'node:fs';
import type { LogFields, Logger } from '../../core/platform/logger';
import { formatLogLine } from '../../core/platform/logger';

export type LogFormat = 'text' | 'json';

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

export type LogRecord = Record<string, string | number | boolean | null | undefined>;

/** One JSON line; undefined fields are left out. */
export function jsonLine(level: string, record: LogRecord): string {
  return JSON.stringify({ time: new Date().toISOString(), level, ...record });
}

/** The guard's Logger writing JSON lines (info and below only with --verbose, as the text logger). */
export function jsonLogger(sink: LogSink, verbose: boolean): Logger {
  const line = (level: string) => (message: string, fields?: LogFields) =>
    sink.line(jsonLine(level, { msg: message, ...fields }));
  const quiet = () => undefined;
  return {
    trace: verbose ? line('trace') : quiet,
    debug: verbose ? line('debug') : quiet,
    info: verbose ? line('info') : quiet,
    warn: line('warn'),
    error: line('error'),
  };
}

/** The same Logger writing text lines to a sink (`--log-file` without `--log-format json`). */
export function textLogger(sink: LogSink, verbose: boolean): Logger {
  const line = (level: string) => (message: string, fields?: LogFields) =>
    sink.line(`[${level}] ${formatLogLine(message, fields)}`);
  const quiet = () => undefined;
  return {
    trace: verbose ? line('trace') : quiet,
    debug: verbose ? line('debug') : quiet,
    info: verbose ? line('info') : quiet,
    warn: line('warn'),
    error: line('error'),
  };
}
