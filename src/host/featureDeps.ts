import type * as vscode from 'vscode';
import type { Logger } from '../core/platform/logger';
import type { DatabaseSession } from './connection/databaseSession';
import type { SqlReview } from './sqlApproval/sqlReview';

/** What Ask… and jobs both need from the extension: the database, the inline approval, the model key, the panel. */
export interface FeatureDeps {
  workspaceState: vscode.Memento;
  session: DatabaseSession;
  review: SqlReview;
  logger: Logger;
  /** Where .pgagent/ lives: the workspace folder, else the extension's storage. */
  rootDir: string;
  /** The Gemini key from SecretStorage (the environment's GEMINI_API_KEY is the fallback). */
  geminiKey(): Promise<string | undefined>;
  showPanel(): Thenable<unknown>;
  /** The panel's state changed: push it. */
  onChange(): void;
}
