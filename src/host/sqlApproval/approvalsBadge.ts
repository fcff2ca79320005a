/**
 * The count of everything waiting for a person's approval — write and plan tickets from asks, jobs, the
 * CLI, agents and teammates — as a badge on the Postgres Agent activity-bar icon (issue 15). Counted from
 * the ticket store, so a teammate's pending write counts as soon as its ticket exists. Activation stays
 * lean: the store is first read a moment after start-up (only when the workspace has tickets), then on
 * every change of the window's approvals and of the approvals folder; with Redis, also every 15 s.
 */
import * as vscode from 'vscode';
import { existsSync, readdirSync } from 'node:fs';
import type { Logger } from '../../core/platform/logger';
import type { CoreServices } from '../lazyServices';
import { redisUrl } from '../settings/settings';
import type { WindowTickets } from './windowTickets';
import type { PendingTicket } from '../ui/navigatorView';
import { throttle } from '../../shared/throttle';
import { visibleSql } from '../../shared/visibleSql';

const START_DELAY_MS = 2_000;
const REDIS_POLL_MS = 15_000;

export interface BadgeTargets {
  /** The side panel, once VS Code has shown it (its badge shows on the icon). */
  webview(): vscode.WebviewView | undefined;
  /** A view that exists from activation on (its badge shows on the icon while the panel was never shown). */
  tree: vscode.TreeView<unknown>;
}

const SQL_START = 200;

/** The core's error reading, loaded when called (host/compose/approvalsBadgePort.ts). */
export type ApprovalsBadgePort = Pick<CoreServices, 'toAgentError'>;

export class ApprovalsBadge implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly recount = throttle(() => void this.count(), 300);
  private lastCount = 0;
  private pending: PendingTicket[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** The list of pending tickets changed (the navigator shows it). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly port: ApprovalsBadgePort,
    private readonly tickets: WindowTickets,
    /** The window's own approvals changed (a write held, decided, run). */
    approvalsChanged: vscode.Event<void>,
    private readonly approvalsDir: string,
    private readonly targets: BadgeTargets,
    private readonly logger: Logger,
  ) {
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(approvalsDir), '**'),
    );
    const changed = () => this.recount.request();
    this.disposables.push(
      watcher,
      watcher.onDidCreate(changed),
      watcher.onDidChange(changed),
      watcher.onDidDelete(changed),
      approvalsChanged(changed),
    );
    const hasTickets = existsSync(approvalsDir) && readdirSync(approvalsDir).length > 0;
    if (hasTickets || redisUrl()) {
      const start = setTimeout(changed, START_DELAY_MS);
      this.disposables.push({ dispose: () => clearTimeout(start) });
    }
    if (redisUrl()) {
      const poll = setInterval(changed, REDIS_POLL_MS);
      this.disposables.push({ dispose: () => clearInterval(poll) });
    }
  }

  /** Shows the count again on whichever view can carry it now (call when the side panel appears). */
  refresh(): void {
    this.apply(this.lastCount);
  }

  /** Pending, unexpired tickets as last read, newest first. */
  waiting(): readonly PendingTicket[] {
    return this.pending;
  }

  private async count(): Promise<void> {
    try {
      const store = await this.tickets.ticketStore();
      const pending = await store.list({ status: ['PENDING_APPROVAL'] });
      const now = Date.now();
      const live = pending
        .filter((t) => Date.parse(t.expiresAt) > now)
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      const listed = live.map((t): PendingTicket => ({
        id: t.id,
        kind: t.kind,
        risk: t.risk,
        createdBy: t.createdBy,
        createdAt: t.createdAt,
        ...(t.plan ? { plan: t.plan } : {}),
        sqlStart: t.kind === 'write' ? t.sql.slice(0, SQL_START) : '',
        hiddenChars: t.kind === 'write' ? visibleSql(t.sql).hidden.length : 0,
        ...(t.origin === 'guardTransaction' ? { statements: t.transaction?.statements.length ?? 0 } : {}),
      }));
      const same = listed.length === this.pending.length && listed.every((t, i) => t.id === this.pending[i]?.id);
      this.pending = listed;
      if (!same) this.changed.fire();
      this.apply(live.length);
    } catch (error) {
      this.logger.warn('could not count the approvals waiting', { error: this.port.toAgentError(error).message });
    }
  }

  private apply(count: number): void {
    this.lastCount = count;
    const badge = count > 0 ? { value: count, tooltip: `${count} waiting for your approval` } : undefined;
    const webview = this.targets.webview();
    if (webview) {
      webview.badge = badge;
      this.targets.tree.badge = undefined;
    } else {
      this.targets.tree.badge = badge;
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.recount.dispose();
    for (const d of this.disposables.reverse()) d.dispose();
  }
}
