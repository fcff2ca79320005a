/**
 * postgresAgent.openAskResult: a recent ask's result, from the navigator's list or the palette (a pick of
 * the recent asks). Its rows' tab when the results view still keeps it; the side panel when it is the
 * answer shown there; otherwise its read run again (READ ONLY, the row cap) into a new tab, titled so.
 * An ask without rows (a write, a refusal, a failure) says what became of it.
 */
import * as vscode from 'vscode';
import type { RecentAskView } from '../../shared/protocol';
import type { RecentAsks } from './recentAsks';
import type { ResultsPanel } from '../schema/resultsPanel';
import { SIDE_PANEL_VIEW_ID } from '../ui/panelProvider';

export const OPEN_ASK_RESULT_COMMAND = 'postgresAgent.openAskResult';

/** The results view's key of an ask's rows. */
export function askResultKey(threadId: string): string {
  return `ask:${threadId}`;
}

export interface OpenAskResultDeps {
  results: ResultsPanel;
  recentAsks: RecentAsks;
  /** The thread of the answer the side panel shows now. */
  shownThreadId: () => string | undefined;
}

export function registerOpenAskResult(deps: OpenAskResultDeps): vscode.Disposable {
  return vscode.commands.registerCommand(OPEN_ASK_RESULT_COMMAND, async (threadId?: unknown) => {
    const ask =
      typeof threadId === 'string'
        ? deps.recentAsks.list().find((r) => r.threadId === threadId)
        : await pick(deps.recentAsks.list());
    if (!ask) return;
    await open(ask, deps);
  });
}

async function open(ask: RecentAskView, deps: OpenAskResultDeps): Promise<void> {
  if (deps.results.reveal(askResultKey(ask.threadId))) return;
  if (deps.shownThreadId() === ask.threadId) {
    await vscode.commands.executeCommand(`${SIDE_PANEL_VIEW_ID}.focus`);
    return;
  }
  if (ask.status === 'answered' && ask.sql !== undefined) {
    await vscode.commands.executeCommand('postgresAgent.showQueryResults', {
      sql: ask.sql,
      title: `${ask.question.slice(0, 40)} (run again)`,
    });
    return;
  }
  void vscode.window.showInformationMessage(`"${ask.question}" has no rows to show: it ${STATUS_TEXT[ask.status]}.`);
}

const STATUS_TEXT: Record<RecentAskView['status'], string> = {
  running: 'was still running',
  answered: 'was answered without a query',
  held: 'held a write for approval',
  executed: 'ran a write',
  rejected: 'held a write that was rejected',
  refused: 'was refused',
  failed: 'failed',
  cancelled: 'was cancelled',
};

async function pick(recent: readonly RecentAskView[]): Promise<RecentAskView | undefined> {
  if (recent.length === 0) {
    void vscode.window.showInformationMessage('No questions asked in this workspace yet: use "Postgres Agent: Ask…".');
    return undefined;
  }
  const chosen = await vscode.window.showQuickPick(
    recent.map((ask) => ({
      label: ask.question,
      description: `${ask.status} · ${new Date(ask.at).toLocaleString()}`,
      ask,
    })),
    { title: 'Open the result of a recent ask', matchOnDescription: true },
  );
  return chosen?.ask;
}
