/**
 * The messages between the extension host and the worker thread that owns the sample database (PGlite),
 * so a long statement or a first open never holds the host's event loop (sampleDbWorker.ts is the
 * worker, sampleDbInWorker.ts the host's Db over it).
 */
import type { ErrorInfo } from '../../../shared/errorCodes';
import { AgentError } from '../../platform/errors';
import type { LogFields } from '../../platform/logger';
import type { DbResult, DbTextResult } from '../db';
import { DbQueryError } from '../dbErrors';

/** What the host gives the worker at its start. */
export interface SampleWorkerData {
  dataDir: string;
  /** The shipped image; the worker's default (beside its own script) when absent. */
  imageFile?: string;
}

export type HostToWorker =
  | { id: number; op: 'query'; sql: string; params?: readonly unknown[] }
  | { id: number; op: 'queryText'; sql: string; params?: readonly unknown[] }
  | { id: 0; op: 'close' };

/** An error as it crosses the thread boundary: enough to rebuild the AgentError the caller would have got. */
export type WorkerError =
  | { kind: 'query'; message: string; sqlState: string; position?: number; detail?: string; hint?: string }
  | { kind: 'agent'; info: ErrorInfo }
  | { kind: 'other'; message: string };

export type WorkerToHost =
  | { op: 'log'; level: 'trace' | 'debug' | 'info' | 'warn' | 'error'; message: string; fields?: LogFields }
  | { op: 'progress'; message: string }
  | { op: 'ready' }
  | { op: 'openFailed'; error: WorkerError }
  | { op: 'result'; id: number; result: DbResult | DbTextResult }
  | { op: 'failed'; id: number; error: WorkerError }
  | { op: 'closed' };

export function toWorkerError(error: unknown): WorkerError {
  if (error instanceof DbQueryError) {
    return {
      kind: 'query',
      message: error.message,
      sqlState: error.sqlState,
      ...(error.position !== undefined ? { position: error.position } : {}),
      ...(error.detail !== undefined ? { detail: error.detail } : {}),
      ...(error.hint !== undefined ? { hint: error.hint } : {}),
    };
  }
  if (error instanceof AgentError) return { kind: 'agent', info: error.toInfo() };
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}

/** The error the caller would have got had the statement run in its own thread. */
export function fromWorkerError(error: WorkerError): AgentError {
  switch (error.kind) {
    case 'query':
      return new DbQueryError(error.message, error.sqlState, error.position, error.detail, error.hint);
    case 'agent':
      return new AgentError(error.info.code, error.info.message, error.info.advice);
    default:
      return new AgentError('INTERNAL', error.message);
  }
}
