/**
 * Where a job stands, as the UI and the CLI see it: the job file plus the reason it is not running
 * (waiting for the plan review, waiting for a write's approval, finished, or stopped half-way).
 */
import type { ErrorInfo } from '../../shared/errorCodes';
import type { ImpactReport, TableEffect } from '../../shared/impactReport';
import type { Job, JobPhase, JobStatus } from './job';

export type JobStop =
  /** Frozen after a strategic phase for the person's review (status pending_review). */
  | {
      kind: 'review';
      cycle: number;
      maxReviewCycles: number;
      overLimit: boolean;
      /** The plan ticket the review waits on (approve/request changes decide it). */
      ticketId?: string;
      /** sha256 of the plan as it is now (job id + plan.md + todos.yaml): sent back with a decision. */
      planHash?: string;
    }
  /** A write of the tactical phase held for a person's approval (its ticket is PENDING_APPROVAL). */
  /** `lockWait`: approved, but it stopped because others hold its locks (LOCK_UNAVAILABLE); Continue tries it again. */
  | {
      kind: 'approval';
      ticketId: string;
      sql: string;
      sqlFile: string;
      impact: ImpactReport;
      todoId: string | null;
      lockWait?: string;
    }
  | { kind: 'completed'; summary: string }
  | { kind: 'failed'; error: ErrorInfo }
  | { kind: 'cancelled' }
  /** Paused by the person (status frozen); `continue` thaws it. */
  | { kind: 'frozen' }
  /** Not running and not at a stop (a window reload or a killed process mid-phase): `continue` goes on from the checkpoint. */
  | { kind: 'interrupted'; error?: ErrorInfo };

/** What the last approved write of the job did (set on the outcome that executed it). */
export interface JobExecution {
  ticketId: string;
  rows: number;
  tables: TableEffect[];
  /** Relative to the job folder: undo/NNN.sql. */
  undoFile: string;
}

export interface JobOutcome {
  job: Job;
  stop: JobStop;
  execution?: JobExecution;
}

/** Progress while a job runs, for progress notifications, the status bar and a live panel. */
export type JobEvent =
  | { type: 'status'; jobId: string; status: JobStatus }
  | { type: 'step'; jobId: string; phase: JobPhase; message: string }
  /** workspace.md, plan.md, todos.yaml or another file of the job changed. */
  | { type: 'files'; jobId: string };
