/**
 * A status bar item beside the connection's while the database is reached through an SSH tunnel:
 * `$(remote) tunnel: deploy@bastion:22` when it is up, a warning colour while it is down or reconnecting.
 * Hidden for connections without a tunnel.
 */
import * as vscode from 'vscode';
import type { DatabaseSession } from './databaseSession';

export class TunnelStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('postgresAgent.tunnel', vscode.StatusBarAlignment.Left, 99);
  private readonly subscription: vscode.Disposable;

  constructor(private readonly session: DatabaseSession) {
    this.item.name = 'Postgres Agent SSH Tunnel';
    this.item.command = 'postgresAgent.testConnection';
    this.subscription = session.onDidChange(() => this.render());
    this.render();
  }

  private render(): void {
    const tunnel = this.session.tunnel;
    if (!tunnel) {
      this.item.hide();
      return;
    }
    const last = tunnel.route.split(' → ').pop() ?? tunnel.route;
    switch (tunnel.state) {
      case 'up':
        this.item.text = `$(remote) tunnel: ${last}`;
        this.item.tooltip = `Postgres Agent: SSH tunnel up through ${tunnel.route} — click to test the connection`;
        this.item.backgroundColor = undefined;
        break;
      case 'connecting':
        this.item.text = `$(sync~spin) tunnel: ${last}`;
        this.item.tooltip = `Postgres Agent: opening the SSH tunnel through ${tunnel.route}…`;
        this.item.backgroundColor = undefined;
        break;
      case 'down':
        this.item.text = `$(debug-disconnect) tunnel down: ${last}`;
        this.item.tooltip = `Postgres Agent: the SSH tunnel through ${tunnel.route} is down; the next query opens it again — click to test the connection`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
    }
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
