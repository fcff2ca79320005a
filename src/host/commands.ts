/** The palette commands (category "Postgres Agent"); the panel's buttons run the same ones. */
import * as vscode from 'vscode';
import type { Logger } from '../core/platform/logger';
import type { PanelCommand } from '../shared/panelMessages';
import type { AskController } from './ask/askController';
import { JOB_COMMAND_IDS } from './jobs/jobCommands';
import type { ConnectionStore } from './connection/connectionStore';
import type { DatabaseSession } from './connection/databaseSession';
import { promptForProfile } from './connection/connectionForm';
import { saveAnswer } from './connection/connectionCommands';
import type { InlineApproval } from './sqlApproval/inlineApproval';
import { SIDE_PANEL_VIEW_ID } from './ui/panelProvider';

export const GEMINI_KEY_SECRET = 'postgresAgent.geminiApiKey';

/** A new config.json states the defaults, so the team sees what it can tighten. */
const STARTER_POLICY = {
  connections: [],
  approval: { autoApproveMaxRisk: 'none' },
  safety: { criticalTables: [], riskThresholds: { low: 10, medium: 100, high: 1000 } },
  planning: { interactive: true, maxReviewCycles: 5 },
};

/** Palette command id of each panel command. */
export const COMMAND_IDS: Record<PanelCommand, string> = {
  openSampleDatabase: 'postgresAgent.openSampleDatabase',
  addConnection: 'postgresAgent.addConnection',
  selectConnection: 'postgresAgent.selectConnection',
  setGeminiApiKey: 'postgresAgent.setGeminiApiKey',
  ask: 'postgresAgent.ask',
  refreshSchema: 'postgresAgent.refreshSchema',
  findTable: 'postgresAgent.findTable',
  // Panel-only (the answer's buttons): registered, not contributed to the palette.
  copyAnswerSql: 'postgresAgent.copyAnswerSql',
  openAnswerSql: 'postgresAgent.openAnswerSql',
  showResults: 'postgresAgent.showResults',
  newJob: JOB_COMMAND_IDS.newJob,
  openJob: JOB_COMMAND_IDS.openJob,
};

/** What the palette commands need of the window (built in src/extension.ts). */
export interface CommandsPort {
  context: vscode.ExtensionContext;
  store: ConnectionStore;
  session: DatabaseSession;
  approval: InlineApproval;
  ask: AskController;
  logger: Logger;
  /** The error shown with its advice and a way to the log (ui/showError.ts). */
  showError(error: unknown): Promise<void>;
  apiKeyChanged(): void;
}

export function registerCommands(deps: CommandsPort): vscode.Disposable[] {
  const { store, session, logger } = deps;
  const connect = async (choice: Parameters<DatabaseSession['connect']>[0]) => {
    await store.setActive(choice);
    try {
      await session.connect(choice);
    } catch (error) {
      await deps.showError(error);
    }
  };
  const commands: Record<string, (...args: unknown[]) => unknown> = {
    'postgresAgent.showReviewPanel': () => vscode.commands.executeCommand(`${SIDE_PANEL_VIEW_ID}.focus`),
    [COMMAND_IDS.openSampleDatabase]: async () => {
      await vscode.commands.executeCommand(`${SIDE_PANEL_VIEW_ID}.focus`);
      await connect({ kind: 'sample' });
    },
    [COMMAND_IDS.selectConnection]: async () => {
      const profiles = await store.profiles();
      type Item = vscode.QuickPickItem & { choice?: Parameters<typeof connect>[0]; add?: true };
      const active = store.active();
      const items: Item[] = [
        {
          label: '$(beaker) Sample database',
          description: 'PGlite, in this window',
          detail: 'A shop with customers, orders, payments… generated on first use; nothing to install.',
          picked: active.kind === 'sample',
          choice: { kind: 'sample' },
        },
        ...profiles.map((p): Item => ({
          label: `$(database) ${p.name}`,
          description: `${p.user}@${p.host}:${p.port ?? 5432}/${p.database}`,
          picked: active.kind === 'profile' && active.name === p.name,
          choice: { kind: 'profile', name: p.name },
        })),
        { label: '$(add) Add Connection…', add: true },
      ];
      const picked = await vscode.window.showQuickPick(items, { title: 'Postgres Agent: Select Connection' });
      if (!picked) return;
      if (picked.add) return vscode.commands.executeCommand(COMMAND_IDS.addConnection);
      if (picked.choice) await connect(picked.choice);
    },
    [COMMAND_IDS.addConnection]: async () => {
      const added = await promptForProfile();
      if (!added) return;
      await saveAnswer(store, added);
      logger.info('connection profile saved', { profile: added.profile.name });
      await connect({ kind: 'profile', name: added.profile.name });
    },
    [COMMAND_IDS.setGeminiApiKey]: async () => {
      const key = await vscode.window.showInputBox({
        title: 'Postgres Agent: Set Gemini API Key',
        prompt: "Kept in VS Code's secret storage, never in a file. Leave empty to remove it.",
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key === '') await deps.context.secrets.delete(GEMINI_KEY_SECRET);
      else await deps.context.secrets.store(GEMINI_KEY_SECRET, key.trim());
      deps.apiKeyChanged();
      void vscode.window.showInformationMessage(key === '' ? 'Gemini API key removed.' : 'Gemini API key saved.');
    },
    'postgresAgent.openWorkspacePolicy': async () => {
      // The workspace's safety and planning policy, shared with the CLI and teammates (wins over user settings).
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      if (!folder)
        return vscode.window.showWarningMessage(
          'Open a folder first: the workspace policy lives in its .pgagent/config.json.',
        );
      const file = vscode.Uri.joinPath(folder, '.pgagent', 'config.json');
      const exists = await vscode.workspace.fs.stat(file).then(
        () => true,
        () => false,
      );
      if (!exists)
        await vscode.workspace.fs.writeFile(
          file,
          new TextEncoder().encode(`${JSON.stringify(STARTER_POLICY, null, 2)}\n`),
        );
      await vscode.window.showTextDocument(file);
    },
    [COMMAND_IDS.refreshSchema]: async () => {
      try {
        await session.refreshSchema();
      } catch (error) {
        await deps.showError(error);
      }
    },
    [COMMAND_IDS.ask]: (prefill?: unknown) => deps.ask.ask(typeof prefill === 'string' ? prefill : undefined),
    [COMMAND_IDS.copyAnswerSql]: () => deps.ask.copySql(),
    [COMMAND_IDS.openAnswerSql]: () => deps.ask.openSql(),
    'postgresAgent.runSqlWithReview': () => deps.approval.runFromEditor(vscode.window.activeTextEditor),
    'postgresAgent.approveTicket': (id: unknown) =>
      typeof id === 'string' ? deps.approval.decide(id, true) : undefined,
    'postgresAgent.rejectTicket': (id: unknown) =>
      typeof id === 'string' ? deps.approval.decide(id, false) : undefined,
    'postgresAgent.recheckImpact': (id: unknown) => (typeof id === 'string' ? deps.approval.recheck(id) : undefined),
    'postgresAgent.openUndoScript': (id: unknown) => (typeof id === 'string' ? deps.approval.openUndo(id) : undefined),
    'postgresAgent.runApprovedAgain': (id: unknown) =>
      typeof id === 'string' ? deps.approval.runAgain(id) : undefined,
    'postgresAgent.showImpact': () => vscode.commands.executeCommand(`${SIDE_PANEL_VIEW_ID}.focus`),
  };
  return Object.entries(commands).map(([id, handler]) => vscode.commands.registerCommand(id, handler));
}
