/**
 * Connection profiles and the active choice. Profiles come from the `postgresAgent.connections` setting
 * and the workspace's .pgagent/config.json (shared with the CLI); passwords only ever live in
 * SecretStorage. The active choice is per workspace.
 */
import * as vscode from 'vscode';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ConnectionProfile } from '../../core/db/connectionTarget';
import type { CoreServices } from '../lazyServices';

/** What the store reads of the core: the workspace's .pgagent/config.json (host/compose/connectionPorts.ts). */
export type ConnectionStorePort = Pick<CoreServices, 'readWorkspaceConfig' | 'workspacePaths'>;

export type ConnectionChoice = { kind: 'sample' } | { kind: 'profile'; name: string };

const ACTIVE_KEY = 'postgresAgent.activeConnection';
const passwordKey = (name: string) => `postgresAgent.password.${name}`;

export class ConnectionStore {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly port: ConnectionStorePort,
    private readonly context: vscode.ExtensionContext,
    /** The first workspace folder, whose .pgagent/ holds the shared config; undefined with no folder open. */
    readonly workspaceDir: string | undefined,
  ) {}

  /** The sample database until the user picks something else: the first minute needs no server. */
  active(): ConnectionChoice {
    const stored = this.context.workspaceState.get<ConnectionChoice>(ACTIVE_KEY);
    return stored?.kind === 'profile' && typeof stored.name === 'string' ? stored : { kind: 'sample' };
  }

  async setActive(choice: ConnectionChoice): Promise<void> {
    await this.context.workspaceState.update(ACTIVE_KEY, choice);
    this.changed.fire();
  }

  async profiles(): Promise<ConnectionProfile[]> {
    // An untrusted workspace names no connection: only the person's own (user settings) are offered (workspaceTrust.ts).
    const trusted = vscode.workspace.isTrusted;
    const setting = vscode.workspace.getConfiguration('postgresAgent');
    const fromSettings =
      (trusted
        ? setting.get<ConnectionProfile[]>('connections')
        : setting.inspect<ConnectionProfile[]>('connections')?.globalValue) ?? [];
    const fromWorkspace =
      this.workspaceDir && trusted
        ? (await this.port.readWorkspaceConfig(this.port.workspacePaths(this.workspaceDir))).connections
        : [];
    const byName = new Map<string, ConnectionProfile>();
    for (const p of [...fromSettings, ...fromWorkspace]) byName.set(p.name, p);
    return [...byName.values()];
  }

  password(name: string): Thenable<string | undefined> {
    return this.context.secrets.get(passwordKey(name));
  }

  /**
   * Saves a profile where the CLI can find it too (.pgagent/config.json of the workspace), or in user
   * settings when no folder is open; the password goes to SecretStorage.
   */
  async saveProfile(profile: ConnectionProfile, password: string | undefined): Promise<void> {
    if (password) await this.context.secrets.store(passwordKey(profile.name), password);
    else await this.context.secrets.delete(passwordKey(profile.name));
    if (this.workspaceDir) {
      const file = this.port.workspacePaths(this.workspaceDir).config;
      const config = await readJsonObject(file);
      const others = Array.isArray(config.connections)
        ? (config.connections as ConnectionProfile[]).filter((p) => p.name !== profile.name)
        : [];
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify({ ...config, connections: [...others, profile] }, null, 2)}\n`);
    } else {
      const settings = vscode.workspace.getConfiguration('postgresAgent');
      const others = (settings.get<ConnectionProfile[]>('connections') ?? []).filter((p) => p.name !== profile.name);
      await settings.update('connections', [...others, profile], vscode.ConfigurationTarget.Global);
    }
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }
}

async function readJsonObject(file: string): Promise<Record<string, unknown>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return {};
    throw error;
  }
}
