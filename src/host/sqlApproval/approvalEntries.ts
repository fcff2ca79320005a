/**
 * The writes the inline approval shows in this window (its own Run SQL with Review, an ask run's, a job's, an
 * outside agent's proposal), each with where its statement sits in its document and how far it got; plus the
 * last read's rows. One model that the editor decorations draw, the decisions change and the panel lists.
 */
import * as vscode from 'vscode';
import type { DecisionRequest } from '../../core/approvals/approvalPath';
import type { GuardTransactionRecord } from '../../core/approvals/ticket';
import type { ErrorInfo } from '../../shared/errorCodes';
import type { ApprovalStatus, ApprovalView, ImpactView, ResultsView } from '../../shared/protocol';

/**
 * A write held by someone else (an ask run, a job): the inline approval shows it and takes the decision, but the
 * owner executes it, so the ticket is consumed exactly once, by the owner's run.
 */
export interface HeldWriteOwner {
  /** Runs the approved ticket once and says what it did; throws when it did not run. */
  execute(): Promise<{
    rows: number;
    tables: { via: string; inserted: number; updated: number; deleted: number }[];
    undoFile: string;
  }>;
  /** The ticket was rejected, voided or expired: the owner finishes its run. */
  rejected(): Promise<void>;
  /**
   * A person's decision in this window, taken by the owner, which records it and goes on (a job: `decideWrite`,
   * its one decision path): what the approved write did, 'rejected', or 'not taken' when it could not act now.
   * Without it the window records the decision and calls `execute` or `rejected`.
   */
  decide?(
    decision: DecisionRequest,
  ): Promise<Awaited<ReturnType<HeldWriteOwner['execute']>> | 'rejected' | 'not taken'>;
}

/** A write held elsewhere, handed to the inline approval to show and decide. */
export interface HeldWrite {
  ticketId: string;
  uri: vscode.Uri;
  start: number;
  end: number;
  sql: string;
  connection: string;
  impact: ImpactView;
  /** An ask run or a job, which executes the write once approved. */
  owner?: HeldWriteOwner;
  /**
   * Who proposed it, when an outside agent did (MCP propose_write, the language-model tools): the executor rule
   * (README "Outside agents") says only that agent runs it, with execute_approved; this window only decides it.
   */
  proposedBy?: string;
  /** A client transaction held whole by the guard (its statements and measured effects): the client's retry commits it. */
  transaction?: GuardTransactionRecord;
}

/** `start`/`end`: offsets of the statement in its document, kept up to date as the text around it is edited. */
export interface ApprovalEntry extends HeldWrite {
  status: ApprovalStatus;
  executed?: { at: string; rows: number; undoFile: string };
  error?: ErrorInfo;
  /** Set when this window makes the decision, so the decision watcher does not act on it a second time. */
  decidedHere?: boolean;
  /** Stops waiting for a teammate's decision (and for an agent's execution). */
  watch: AbortController;
  decisions?: ApprovalView['decisions'];
}

/** Decided approvals stay in the panel for reference, the newest few only. */
const FINISHED_SHOWN = 3;

/** Still open: decided by nobody yet, or approved and not yet run. */
/**
 * Issue 25: a write that failed before anything ran, its ticket still approved — the team's policy was not met
 * yet, or its lock was held by others past the short waits — can be run again as it is.
 */
export function notRunYet(t: ApprovalEntry): boolean {
  return t.status === 'failed' && (t.error?.code === 'APPROVAL_POLICY' || t.error?.code === 'LOCK_UNAVAILABLE');
}

export function isOpen(status: ApprovalStatus): boolean {
  return status === 'pending' || status === 'stale' || status === 'running' || status === 'approved';
}

export class ApprovalEntries implements vscode.Disposable {
  private readonly entries = new Map<string, ApprovalEntry>();
  /** The last read of Run SQL with Review. */
  results: ResultsView | null = null;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private lensesAgain: NodeJS.Timeout | undefined;
  readonly onDidChange = this.changed.event;
  readonly onDidChangeLenses = this.lensesChanged.event;

  get(ticketId: string): ApprovalEntry | undefined {
    return this.entries.get(ticketId);
  }

  values(): ApprovalEntry[] {
    return [...this.entries.values()];
  }

  /**
   * Adds an entry (after `replacing`, the one it was re-checked from, which stops being watched). The same ticket
   * held again (its statement run again: the pending ticket is reused) replaces its earlier entry: one card.
   */
  add(entry: ApprovalEntry, replacing?: ApprovalEntry): void {
    for (const old of [replacing, this.entries.get(entry.ticketId)]) {
      if (!old || old === entry) continue;
      old.watch.abort();
      this.entries.delete(old.ticketId);
    }
    this.entries.set(entry.ticketId, entry);
    this.refresh();
  }

  /** Whether `entry` is still the one shown for its ticket (a re-check replaces it). */
  isCurrent(entry: ApprovalEntry): boolean {
    return this.entries.get(entry.ticketId) === entry;
  }

  view(): { results: ResultsView | null; approvals: ApprovalView[] } {
    const newestFirst = this.values().reverse();
    const open = newestFirst.filter((t) => isOpen(t.status));
    const done = newestFirst.filter((t) => !open.includes(t)).slice(0, FINISHED_SHOWN);
    return {
      results: this.results,
      approvals: [...open, ...done].map((t): ApprovalView => ({
        ticketId: t.ticketId,
        sql: t.sql,
        status: t.status,
        impact: t.impact,
        ...(t.executed ? { executed: t.executed } : {}),
        ...(t.error ? { error: t.error } : {}),
        ...(t.decisions ? { decisions: t.decisions } : {}),
        ...(t.proposedBy !== undefined ? { proposedBy: t.proposedBy } : {}),
        ...(t.transaction ? { transaction: { statements: t.transaction.statements.length } } : {}),
      })),
    };
  }

  /** Redraws the lenses and pushes the panel. */
  refresh(): void {
    this.fireLenses();
    this.changed.fire();
  }

  /** Redraws the lenses only (offsets moved). */
  lensesMoved(): void {
    this.fireLenses();
  }

  /**
   * The workbench sometimes drops a CodeLens change that comes as the panel opens for a new card: in E2E the
   * first held write of a window showed no lens for 90 s, about every other run, and VS Code had not asked the
   * provider again (its log). The change is told again a second after the last one: 6 runs of 6 then showed the
   * lens in a clean clone where, before, 5 runs of 7 had not.
   */
  private fireLenses(): void {
    this.lensesChanged.fire();
    clearTimeout(this.lensesAgain);
    this.lensesAgain = setTimeout(() => this.lensesChanged.fire(), 1000);
  }

  dispose(): void {
    clearTimeout(this.lensesAgain);
    for (const t of this.entries.values()) t.watch.abort();
    this.changed.dispose();
    this.lensesChanged.dispose();
  }
}
