import type * as vscode from 'vscode';
import type { Logger } from '../core/platform/logger';
import type { DatabaseSession } from './connection/databaseSession';
import type { InlineApproval } from './sqlApproval/inlineApproval';
import type { WindowTickets } from './sqlApproval/windowTickets';

/**
 * What Ask…, jobs and planning all need of the window: the database, the tickets, the inline approval, the model key,
 * the panel. What each needs of the core is its own port, built in host/compose/.
 */
export interface FeatureDeps {
  workspaceState: vscode.Memento;
  session: DatabaseSession;
  /** The window's ticket store and signing key. */
  tickets: WindowTickets;
  /** The inline approval: held writes shown with their CodeLens and card, decided there. */
  approval: InlineApproval;
  logger: Logger;
  /** Where .pgagent/ lives: the workspace folder, else the extension's storage. */
  rootDir: string;
  /** The Gemini key from SecretStorage (the environment's GEMINI_API_KEY is the fallback). */
  geminiKey(): Promise<string | undefined>;
  showPanel(): Thenable<unknown>;
  /** The panel's state changed: push it. */
  onChange(): void;
}
