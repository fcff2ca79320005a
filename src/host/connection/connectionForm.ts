/**
 * Add / Edit Connection: a multi-step input (one question at a time, Escape cancels with nothing saved)
 * for the server, the login (password, AWS RDS IAM or Azure Entra ID), TLS (sslmode, CA, client
 * certificate) and an optional SSH tunnel (host, login by ssh-agent, key file or password, jump hosts).
 * Secrets are not asked here, except the database password: a key's passphrase or an SSH password is
 * asked on first connect and kept in SecretStorage.
 */
import * as vscode from 'vscode';
import { homedir } from 'node:os';
import type { ConnectionProfile, SslMode } from '../../core/db/connectionTarget';
import type { IamAuth } from '../../core/db/iam/iamConfig';
import type { SshAuth, SshHop, SshTunnelConfig } from '../../core/db/tunnel/sshConfig';
import { parseHopAddress } from '../../core/db/tunnel/sshConfig';

export interface ProfileAnswer {
  profile: ConnectionProfile;
  /** The database password typed; undefined with "keep" = leave the saved one as it is. */
  password: string | undefined;
  keepPassword: boolean;
}

type Choice<T> = vscode.QuickPickItem & { value: T };

export async function promptForProfile(existing?: ConnectionProfile): Promise<ProfileAnswer | undefined> {
  const verb = existing ? `Edit Connection "${existing.name}"` : 'Add Connection';
  const title = (what: string) => `Postgres Agent: ${verb} — ${what}`;
  const required = (what: string) => (value: string) => (value.trim() === '' ? `Enter a ${what}.` : undefined);
  const ask = (what: string, options: vscode.InputBoxOptions) =>
    vscode.window.showInputBox({ title: title(what), ignoreFocusOut: true, ...options });
  const choose = async <T>(what: string, items: Choice<T>[], current?: T): Promise<T | undefined> => {
    const picked = await vscode.window.showQuickPick(
      items.map((i) => ({ ...i, picked: i.value === current })),
      { title: title(what), ignoreFocusOut: true },
    );
    return picked?.value;
  };

  const name =
    existing?.name ??
    (
      await ask('name', {
        prompt: 'A name for this connection',
        placeHolder: 'shop-staging',
        validateInput: required('name'),
      })
    )?.trim();
  if (name === undefined) return undefined;
  const host = await ask('host', {
    prompt: 'Host (as the SSH host sees it, when you add a tunnel below)',
    value: existing?.host ?? 'localhost',
    validateInput: required('host'),
  });
  if (host === undefined) return undefined;
  const port = await ask('port', {
    prompt: 'Port',
    value: String(existing?.port ?? 5432),
    validateInput: (v) =>
      /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 65535 ? undefined : 'A port is a number from 1 to 65535.',
  });
  if (port === undefined) return undefined;
  const database = await ask('database', {
    prompt: 'Database',
    value: existing?.database ?? 'postgres',
    validateInput: required('database'),
  });
  if (database === undefined) return undefined;
  const user = await ask('user', {
    prompt: 'User',
    value: existing?.user ?? 'postgres',
    validateInput: required('user'),
  });
  if (user === undefined) return undefined;

  const login = await choose<'password' | IamAuth['provider']>(
    'login',
    [
      { label: 'Password', description: "kept in VS Code's secret storage (or your ~/.pgpass)", value: 'password' },
      {
        label: 'AWS RDS IAM',
        description: 'a 15-minute token from your AWS credentials (needs @aws-sdk/rds-signer)',
        value: 'aws-rds',
      },
      {
        label: 'Azure Entra ID',
        description: 'a token from your Azure sign-in (needs @azure/identity)',
        value: 'azure',
      },
    ],
    existing?.iam?.provider ?? 'password',
  );
  if (login === undefined) return undefined;
  let iam: IamAuth | undefined;
  let password: string | undefined;
  let keepPassword = false;
  if (login === 'password') {
    const typed = await ask('password', {
      prompt: existing
        ? 'Password (leave empty to keep the saved one; type a single space to remove it)'
        : "Password (kept in VS Code's secret storage; leave empty for none or ~/.pgpass)",
      password: true,
    });
    if (typed === undefined) return undefined;
    keepPassword = Boolean(existing) && typed === '';
    password = typed.trim() === '' ? undefined : typed;
  } else if (login === 'aws-rds') {
    const region = await ask('AWS region', {
      prompt: "The database's AWS region",
      value: existing?.iam?.provider === 'aws-rds' ? existing.iam.region : 'us-east-1',
      validateInput: required('region'),
    });
    if (region === undefined) return undefined;
    const awsProfile = await ask('AWS profile', {
      prompt: 'A profile of ~/.aws/config (leave empty for the default credentials)',
      value: existing?.iam?.provider === 'aws-rds' ? (existing.iam.awsProfile ?? '') : '',
    });
    if (awsProfile === undefined) return undefined;
    iam = {
      provider: 'aws-rds',
      region: region.trim(),
      ...(awsProfile.trim() ? { awsProfile: awsProfile.trim() } : {}),
    };
  } else {
    iam = { provider: 'azure' };
  }

  const sslmode = await choose<SslMode>(
    'TLS',
    [
      { label: 'disable', description: 'no encryption (local servers)', value: 'disable' },
      { label: 'prefer', description: 'encrypt when the server offers it', value: 'prefer' },
      { label: 'require', description: 'always encrypt, do not verify the certificate', value: 'require' },
      { label: 'verify-ca', description: 'encrypt and verify the certificate against your CA', value: 'verify-ca' },
      {
        label: 'verify-full',
        description: 'encrypt and verify the certificate and the host name',
        value: 'verify-full',
      },
    ],
    existing?.sslmode ?? (iam ? 'verify-full' : 'disable'),
  );
  if (sslmode === undefined) return undefined;
  const tls: Partial<ConnectionProfile> = {};
  if (sslmode === 'verify-ca' || sslmode === 'verify-full') {
    const root = await ask('CA certificate', {
      prompt:
        'The CA certificate file that signed the server\'s (empty: ~/.postgresql/root.crt; "system": the system\'s roots)',
      value: existing?.sslrootcert ?? '',
    });
    if (root === undefined) return undefined;
    if (root.trim()) tls.sslrootcert = root.trim();
  }
  if (sslmode !== 'disable') {
    const cert = await ask('client certificate', {
      prompt: 'A client certificate file, if the server asks for one (empty: none, or ~/.postgresql/postgresql.crt)',
      value: existing?.sslcert ?? '',
    });
    if (cert === undefined) return undefined;
    if (cert.trim()) {
      tls.sslcert = cert.trim();
      const key = await ask('client key', {
        prompt: 'Its private key file (mode 0600)',
        value: existing?.sslkey ?? cert.trim().replace(/\.crt$/, '.key'),
        validateInput: required('key file'),
      });
      if (key === undefined) return undefined;
      tls.sslkey = key.trim();
    }
  }

  const route = await choose<'direct' | 'ssh'>(
    'route',
    [
      { label: 'Direct', description: 'this machine reaches the server', value: 'direct' },
      { label: 'Through an SSH tunnel', description: 'a bastion (and jump hosts) reach it', value: 'ssh' },
    ],
    existing?.ssh ? 'ssh' : 'direct',
  );
  if (route === undefined) return undefined;
  let ssh: SshTunnelConfig | undefined;
  if (route === 'ssh') {
    const answered = await promptForTunnel(existing?.ssh, ask, choose);
    if (!answered) return undefined;
    ssh = answered;
  }

  const profile: ConnectionProfile = {
    name,
    host: host.trim(),
    port: Number(port),
    database: database.trim(),
    user: user.trim(),
    sslmode,
    ...tls,
    ...(ssh ? { ssh } : {}),
    ...(iam ? { iam } : {}),
  };
  return { profile, password, keepPassword };
}

const hopAddress = (value: string) => (parseHopAddress(value) ? undefined : 'Write it as user@host or user@host:port.');

async function promptForTunnel(
  existing: SshTunnelConfig | undefined,
  ask: (what: string, options: vscode.InputBoxOptions) => Thenable<string | undefined>,
  choose: <T>(what: string, items: Choice<T>[], current?: T) => Promise<T | undefined>,
): Promise<SshTunnelConfig | undefined> {
  const address = await ask('SSH host', {
    prompt: 'The SSH host that reaches the database: user@host or user@host:port',
    value: existing ? `${existing.user}@${existing.host}${existing.port ? `:${existing.port}` : ''}` : '',
    validateInput: hopAddress,
  });
  if (address === undefined) return undefined;
  const hop = parseHopAddress(address);
  if (!hop) return undefined;
  const auth = await choose<SshAuth>(
    'SSH login',
    [
      { label: 'ssh-agent', description: 'the keys your agent holds (SSH_AUTH_SOCK)', value: 'agent' },
      {
        label: 'Key file',
        description: 'a private key; its passphrase is asked once and kept in secret storage',
        value: 'key',
      },
      { label: 'Password', description: 'asked once and kept in secret storage', value: 'password' },
    ],
    existing?.auth ?? 'agent',
  );
  if (auth === undefined) return undefined;
  let keyFile: string | undefined;
  if (auth === 'key') {
    keyFile = await ask('SSH key file', {
      prompt: 'The private key file',
      value: existing?.keyFile ?? '~/.ssh/id_ed25519',
      validateInput: (v) => (v.trim() ? undefined : 'Enter the key file.'),
    });
    if (keyFile === undefined) return undefined;
    keyFile = expandHome(keyFile.trim());
  }
  const jumps = await ask('jump hosts', {
    prompt: 'Jump hosts before it (ProxyJump), in order, comma-separated; they log in the same way. Empty: none',
    value: (existing?.jumpHosts ?? []).map((j) => `${j.user}@${j.host}${j.port ? `:${j.port}` : ''}`).join(', '),
    validateInput: (v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map(hopAddress)
        .find(Boolean),
  });
  if (jumps === undefined) return undefined;
  const login = { auth, ...(keyFile ? { keyFile } : {}) };
  const jumpHosts: SshHop[] = jumps
    .split(',')
    .map((s) => parseHopAddress(s))
    .filter((h) => h !== undefined)
    .map((h) => ({ ...h, ...login }));
  return {
    ...hop,
    ...login,
    ...(jumpHosts.length ? { jumpHosts } : {}),
    ...(existing?.keepAliveSeconds ? { keepAliveSeconds: existing.keepAliveSeconds } : {}),
  };
}

function expandHome(file: string): string {
  return file.startsWith('~/') ? `${homedir()}${file.slice(1)}` : file;
}
