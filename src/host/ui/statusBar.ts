/**
 * The status bar item: which database this window works on (a click picks another), or, while a job
 * plans, runs or waits for the person, that job (a click opens its cockpit).
 */
import * as vscode from 'vscode';
import type { DatabaseSession } from '../connection/databaseSession';
import type { ConnectionStore } from '../connection/connectionStore';

/** Opens the cockpit of a job (its id as the argument); defined here so the status bar needs no import of the cockpit. */
export const SHOW_JOB_COCKPIT_COMMAND = 'postgresAgent.showJobCockpit';

/** A job the status bar shows instead of the connection: `$(sync~spin) job: <title> — <state>`. */
export interface JobBarState {
  jobId: string;
  title: string;
  /** Where it stands: its job list item's `state` (shared/jobActions.ts `jobStateText`). */
  state: string;
}

const TITLE_SHOWN = 40;

export class ConnectionStatusBar implements vscode.Disposable {
  private job: JobBarState | undefined;
  private readonly item = vscode.window.createStatusBarItem(
    'postgresAgent.connection',
    vscode.StatusBarAlignment.Left,
    100,
  );
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly session: DatabaseSession,
    private readonly store: ConnectionStore,
  ) {
    this.item.name = 'Postgres Agent Connection';
    this.item.command = 'postgresAgent.selectConnection';
    this.subscriptions = [session.onDidChange(() => this.render()), store.onDidChange(() => this.render())];
    this.render();
    this.item.show();
  }

  /** Shows a job (or, with undefined, the connection again). */
  showJob(job: JobBarState | undefined): void {
    if (job?.jobId === this.job?.jobId && job?.title === this.job?.title && job?.state === this.job?.state) return;
    this.job = job;
    this.render();
  }

  private render(): void {
    if (this.job) {
      const title =
        this.job.title.length > TITLE_SHOWN ? `${this.job.title.slice(0, TITLE_SHOWN - 1)}…` : this.job.title;
      this.item.text = `$(sync~spin) job: ${title} — ${this.job.state}`;
      this.item.tooltip = `Postgres Agent: job "${this.job.title}" — ${this.job.state} (click to open its cockpit)`;
      this.item.command = { command: SHOW_JOB_COCKPIT_COMMAND, title: 'Open Job Cockpit', arguments: [this.job.jobId] };
      this.item.backgroundColor = undefined;
      return;
    }
    this.item.command = 'postgresAgent.selectConnection';
    const state = this.session.connection;
    const choice = this.store.active();
    const name = choice.kind === 'sample' ? 'sample' : choice.name;
    switch (state.status) {
      case 'none':
        this.item.text = `$(database) ${name}`;
        this.item.tooltip = `Postgres Agent: ${name} (not opened yet) — click to select a connection`;
        this.item.backgroundColor = undefined;
        break;
      case 'connecting':
        this.item.text = `$(sync~spin) ${name}`;
        this.item.tooltip = `Postgres Agent: connecting to ${state.label}…`;
        this.item.backgroundColor = undefined;
        break;
      case 'connected':
        this.item.text = `$(database) ${name} · ${state.database}`;
        this.item.tooltip = `Postgres Agent: ${state.label} — click to select a connection`;
        this.item.backgroundColor = undefined;
        break;
      case 'failed':
        this.item.text = `$(error) ${name}`;
        this.item.tooltip = `Postgres Agent: ${state.error.message}${state.error.advice ? `\n${state.error.advice}` : ''}`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
