/**
 * VS Code Workspace Trust (SPEC §5 3a): in a workspace the person has not trusted, the extension reads none
 * of the workspace's settings (.pgagent/config.json, .vscode/settings.json, its connection profiles) and
 * executes no write: auto-approval is off, approved tickets and jobs are not run. Reads and previews still
 * work on the person's own connections (user settings, the sample database): they run read-only or are
 * rolled back, on a database the person chose, not one the workspace named.
 */
import * as vscode from 'vscode';
import type { AgentError } from '../../core/platform/errors';
import type { ErrorCode } from '../../shared/errorCodes';

export function workspaceTrusted(): boolean {
  return vscode.workspace.isTrusted;
}

/** The refusal every executor raises at claim time in an untrusted workspace (undefined when trusted). */
export function untrustedRefusal(
  error: (code: ErrorCode, message: string, advice: string) => AgentError,
): AgentError | undefined {
  if (vscode.workspace.isTrusted) return undefined;
  return error(
    'APPROVAL_POLICY',
    'This workspace is not trusted, so Postgres Agent executes no write in it (the ticket stays approved and unspent).',
    'Trust the folder (Workspaces: Manage Workspace Trust) if you know where it came from, then run the ticket again; or run it with `pg-agent exec --ticket <id>` from a terminal.',
  );
}
