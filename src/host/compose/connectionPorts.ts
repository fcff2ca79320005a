/** The ports of the connection features: saved connections, the open database, SSH prompts, Edit and Test Connection. */
import type * as vscode from 'vscode';
import type { ConnectionCommandsPort } from '../connection/connectionCommands';
import type { ConnectionStorePort } from '../connection/connectionStore';
import type { DatabaseSessionPort } from '../connection/databaseSession';
import type { HostSsh, SshHostPort } from '../connection/sshHostPrompts';
import type { CoreLoader } from '../lazyServices';

export function connectionStorePort(core: CoreLoader): ConnectionStorePort {
  return {
    readWorkspaceConfig: (...args) => core().readWorkspaceConfig(...args),
    workspacePaths: (...args) => core().workspacePaths(...args),
  };
}

export function sshHostPort(core: CoreLoader, secrets: vscode.SecretStorage): SshHostPort {
  return { secrets, knownHostsFile: () => core().ownKnownHostsFile(process.env) };
}

export function databaseSessionPort(core: CoreLoader, ssh: (profile: string) => HostSsh): DatabaseSessionPort {
  return {
    openDatabase: (...args) => core().openDatabase(...args),
    connectionKey: (...args) => core().connectionKey(...args),
    resolveTarget: (...args) => core().resolveTarget(...args),
    openSchemaCache: (...args) => core().openSchemaCache(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    workspacePaths: (...args) => core().workspacePaths(...args),
    announceSchemaChange: (change) => core().schemaChanges.announce(change),
    ssh,
  };
}

export function connectionCommandsPort(
  core: CoreLoader,
  window: Omit<ConnectionCommandsPort, 'resolveTarget' | 'testConnection' | 'stepTitle'>,
): ConnectionCommandsPort {
  return {
    ...window,
    resolveTarget: (...args) => core().resolveTarget(...args),
    testConnection: (...args) => core().testConnection(...args),
    stepTitle: (step) => core().STEP_TITLES[step],
  };
}
