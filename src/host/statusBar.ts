/** The status bar item: which database this window works on; a click picks another. */
import * as vscode from 'vscode';
import type { DatabaseSession } from './databaseSession';
import type { ConnectionStore } from './connectionStore';

export class ConnectionStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('postgresAgent.connection', vscode.StatusBarAlignment.Left, 100);
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

  private render(): void {
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
