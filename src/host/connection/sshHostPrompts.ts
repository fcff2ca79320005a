/**
 * What an SSH tunnel asks of the person in VS Code: a modal to pin a host key seen for the first time
 * (the fingerprint shown), and a key's passphrase or a hop's password, asked once and kept in
 * SecretStorage per connection; a login that fails forgets what it used, so the next try asks again.
 */
import * as vscode from 'vscode';
import type { SshOptions } from '../../core/db/postgresDb';
import type { SshHop } from '../../core/db/tunnel/sshConfig';

/** SecretStorage key of one secret of one hop of one connection. */
export function sshSecretKey(profile: string, kind: 'passphrase' | 'password', hop: SshHop): string {
  return `postgresAgent.ssh.${profile}.${kind}.${hop.user}@${hop.host}:${hop.port ?? 22}${hop.keyFile ? `:${hop.keyFile}` : ''}`;
}

export interface HostSsh {
  options: SshOptions;
  /** Forgets the secrets this attempt used (after a failed login). */
  forget(): Promise<void>;
}

/** Where the secrets are kept and which known_hosts file pins the host keys (host/compose/connectionPorts.ts). */
export interface SshHostPort {
  secrets: vscode.SecretStorage;
  /** The person's own known_hosts file of pinned host keys (core/config/ownConfig.ts). */
  knownHostsFile(): string;
}

export function hostSshOptions(port: SshHostPort, profile: string): HostSsh {
  const { secrets } = port;
  const used = new Set<string>();
  const options: SshOptions = {
    knownHostsFile: port.knownHostsFile(),
    confirmHostKey: async ({ hop, fingerprint, keyType }) => {
      const pin = 'Pin Key and Connect';
      const answer = await vscode.window.showWarningMessage(
        `Postgres Agent: first connection to ${hop}.`,
        {
          modal: true,
          detail: `Its ${keyType} host key fingerprint is\n${fingerprint}\n\nCompare it with the one the host's administrator gives you (ssh-keygen -lf on the host's key). Once pinned, a different key is refused.`,
        },
        pin,
      );
      return answer === pin;
    },
    secret: async ({ kind, hop, name }) => {
      const key = sshSecretKey(profile, kind, hop);
      used.add(key);
      const stored = await secrets.get(key);
      if (stored) return stored;
      const typed = await vscode.window.showInputBox({
        title: `Postgres Agent: ${profile}`,
        prompt:
          kind === 'passphrase'
            ? `Passphrase of the key ${hop.keyFile ?? ''} for ${name}`
            : `Password of ${hop.user} on ${name}`,
        password: true,
        ignoreFocusOut: true,
      });
      if (!typed) return undefined;
      await secrets.store(key, typed);
      return typed;
    },
  };
  return {
    options,
    forget: async () => {
      for (const key of used) await secrets.delete(key);
    },
  };
}
