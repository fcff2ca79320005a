/**
 * Publishes `pg-agent mcp` to VS Code's MCP registry (Copilot agent mode lists its tools) for the active
 * server connection and the workspace folder; a new connection publishes a new definition. The password of
 * the profile is read from SecretStorage only when VS Code starts the server.
 */
import * as vscode from 'vscode';
import type { ConnectionStore } from '../connection/connectionStore';
import { buildMcpLaunch } from './mcpLaunch';
import type { McpLaunchInput } from './mcpLaunch';
import { MCP_PROVIDER_ID } from './lmToolNames';
import { redisUrl } from '../settings/settings';

export function registerMcpServerDefinition(
  context: vscode.ExtensionContext,
  store: ConnectionStore,
): vscode.Disposable[] {
  // Hosts without the MCP API (older VS Code forks) simply get no server; everything else works.
  if (typeof vscode.lm?.registerMcpServerDefinitionProvider !== 'function') return [];
  const changed = new vscode.EventEmitter<void>();
  const workspaceDir = store.workspaceDir ?? context.globalStorageUri.fsPath;
  const declared = (context.extension.packageJSON as { version?: unknown }).version;
  const version = typeof declared === 'string' ? declared : '0';

  const launchInput = async (withPassword: boolean): Promise<McpLaunchInput | undefined> => {
    const choice = store.active();
    const config = vscode.workspace.getConfiguration('postgresAgent');
    const base = {
      extensionPath: context.extensionPath,
      nodePath: process.execPath,
      electron: process.versions.electron !== undefined,
      workspaceDir,
      version,
      ...(redisUrl() ? { redisUrl: redisUrl() } : {}),
      ...(config.get<number>('query.maxRows') !== undefined ? { maxRows: config.get<number>('query.maxRows') } : {}),
      ...(config.get<number>('query.statementTimeoutMs') !== undefined
        ? { timeoutMs: config.get<number>('query.statementTimeoutMs') }
        : {}),
    };
    // The embedded sample database is one PGlite data folder that this window's extension host holds; a
    // second process on it is refused (sampleDbHold). On it, Copilot gets the same operations in-process as
    // language-model tools instead.
    if (choice.kind === 'sample') return undefined;
    // pg-agent mcp would work on this workspace's files and execute approved tickets: not in an untrusted one.
    if (!vscode.workspace.isTrusted) return undefined;
    const profile = (await store.profiles()).find((p) => p.name === choice.name);
    if (!profile) return undefined;
    const password = withPassword ? await store.password(profile.name) : undefined;
    return { ...base, connection: { kind: 'profile', profile, ...(password ? { password } : {}) } };
  };
  const definition = (input: McpLaunchInput): vscode.McpStdioServerDefinition => {
    const launch = buildMcpLaunch(input);
    const server = new vscode.McpStdioServerDefinition(
      launch.label,
      launch.command,
      launch.args,
      launch.env,
      launch.version,
    );
    server.cwd = vscode.Uri.file(launch.cwd);
    return server;
  };

  return [
    changed,
    store.onDidChange(() => changed.fire()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('postgresAgent')) changed.fire();
    }),
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: async () => {
        const input = await launchInput(false);
        return input ? [definition(input)] : [];
      },
      resolveMcpServerDefinition: async () => {
        const input = await launchInput(true);
        return input ? definition(input) : undefined;
      },
    }),
  ];
}
