/**
 * One SSH hop of a tunnel: connect (over TCP, or over the channel of the hop before it), check the host
 * key against pg-agent's known_hosts, log in by ssh-agent, key file or password, and turn every failure
 * into an error that names the hop.
 */
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { Client, utils } from 'ssh2';
import type { ConnectConfig } from 'ssh2';
import { AgentError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { Env } from '../conninfo';
import type { SshHop } from './sshConfig';
import { checkHostKey, keyTypeOf, pinHostKey } from './knownHosts';

/** What a tunnel needs from whoever opens it: where keys are pinned, and a person to ask. */
export interface TunnelDeps {
  /** pg-agent's known_hosts (the person's config folder). */
  knownHostsFile: string;
  /**
   * A host key seen for the first time: show the fingerprint and return true to pin it. Absent (no one to
   * ask: --no-input, a program), an unknown key is refused.
   */
  confirmHostKey?: (request: { hop: string; fingerprint: string; keyType: string }) => Promise<boolean>;
  /** A key file's passphrase or a hop's password, asked of the person (terminal, SecretStorage); undefined when none. */
  secret?: (request: { kind: 'passphrase' | 'password'; hop: SshHop; name: string }) => Promise<string | undefined>;
  /** SSH_AUTH_SOCK for ssh-agent. */
  env: Env;
  logger: Logger;
  /** How long one hop may take to answer and log in (default 15 s). */
  readyTimeoutMs?: number;
  keepAliveSeconds?: number;
}

/** Connects one hop; `sock` is the channel through the previous hop (absent for the first). */
export async function connectHop(hop: SshHop, name: string, deps: TunnelDeps, sock?: Duplex): Promise<Client> {
  const auth = await authConfig(hop, name, deps);
  const port = hop.port ?? 22;
  const client = new Client();
  // The hop must answer and log in within the ready timeout, except while a person looks at its host key
  // (ssh2's own readyTimeout would run through that wait, so ours stops while the question is open).
  const readyMs = deps.readyTimeoutMs ?? 15_000;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const startTimer = () => {
    timer = setTimeout(() => {
      timedOut = true;
      client.end();
      client.emit(
        'error',
        Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' }),
      );
    }, readyMs);
  };
  const stopTimer = () => clearTimeout(timer);
  let hostKeyRefusal: AgentError | undefined;
  const hostVerifier = (key: Buffer, verify: (valid: boolean) => void): undefined => {
    stopTimer();
    verifyHostKey(hop, port, name, key, deps).then(
      () => {
        startTimer();
        verify(true);
      },
      (error: unknown) => {
        hostKeyRefusal =
          error instanceof AgentError ? error : new AgentError('SSH_HOST_KEY_UNKNOWN', `${name}: ${String(error)}`);
        verify(false);
      },
    );
    return undefined;
  };
  const config: ConnectConfig = {
    host: hop.host,
    port,
    username: hop.user,
    // Ours (above) measures the wait; ssh2's would also count the person's.
    readyTimeout: 0x7fffffff,
    keepaliveInterval: (deps.keepAliveSeconds ?? 15) * 1000,
    keepaliveCountMax: 3,
    hostVerifier,
    ...(sock ? { sock } : {}),
    ...auth,
  };
  return new Promise<Client>((resolve, reject) => {
    const onError = (error: Error & { level?: string; code?: string }) => {
      stopTimer();
      client.removeListener('ready', onReady);
      // A discarded client may still report its socket closing: never an unhandled 'error'.
      client.on('error', () => undefined);
      client.end();
      reject(
        hostKeyRefusal ??
          hopError(timedOut ? Object.assign(new Error('timed out'), { level: 'client-timeout' }) : error, hop, name),
      );
    };
    const onReady = () => {
      stopTimer();
      client.removeListener('error', onError);
      // Small query messages must not wait for Nagle's algorithm (a 40 ms stall per round trip, measured).
      client.setNoDelay(true);
      deps.logger.info('ssh hop connected', { hop: name });
      resolve(client);
    };
    client.once('ready', onReady);
    client.once('error', onError);
    startTimer();
    client.connect(config);
  });
}

async function verifyHostKey(hop: SshHop, port: number, name: string, key: Buffer, deps: TunnelDeps): Promise<void> {
  const check = checkHostKey(deps.knownHostsFile, hop.host, port, key);
  if (check.kind === 'pinned') return;
  if (check.kind === 'changed') {
    throw new AgentError(
      'SSH_HOST_KEY_CHANGED',
      `The host key of ${name} has CHANGED: pinned ${check.pinned}, presented ${check.presented}. Someone may be intercepting the connection, or the host was reinstalled; nothing was sent to it.`,
      `If the host's administrator confirms the new key, remove the line "${hop.host.toLowerCase()}:${port}" from ${deps.knownHostsFile} and connect again to pin it.`,
    );
  }
  const keyType = keyTypeOf(key);
  const accepted = deps.confirmHostKey
    ? await deps.confirmHostKey({ hop: name, fingerprint: check.fingerprint, keyType })
    : false;
  if (!accepted) {
    throw new AgentError(
      'SSH_HOST_KEY_UNKNOWN',
      `The host key of ${name} is not known yet (${keyType} ${check.fingerprint}) and was not accepted: nothing was sent to it.`,
      deps.confirmHostKey
        ? "Compare the fingerprint with the one the host's administrator gives (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the host), then connect again and accept it."
        : `Connect once where you can answer (a terminal without --no-input, or VS Code) to check and pin it; pinned keys are kept in ${deps.knownHostsFile}.`,
    );
  }
  await pinHostKey(deps.knownHostsFile, hop.host, port, key);
  deps.logger.info('ssh host key pinned', { hop: name, fingerprint: check.fingerprint });
}

async function authConfig(hop: SshHop, name: string, deps: TunnelDeps): Promise<Partial<ConnectConfig>> {
  switch (hop.auth) {
    case 'agent': {
      const agent = deps.env.SSH_AUTH_SOCK;
      if (!agent) {
        throw new AgentError(
          'SSH_AUTH_FAILED',
          `${name} logs in with ssh-agent, and no agent is running here (SSH_AUTH_SOCK is not set).`,
          'Start ssh-agent and add the key (ssh-add), or choose a key file for this hop.',
        );
      }
      return { agent };
    }
    case 'key':
      return privateKey(hop, name, deps);
    case 'password': {
      const password = await deps.secret?.({ kind: 'password', hop, name });
      if (!password)
        throw new AgentError(
          'SSH_AUTH_FAILED',
          `${name} logs in with a password, and none was given.`,
          'Enter it when asked (VS Code keeps it in its secret storage), or use a key.',
        );
      return { password };
    }
  }
}

/** The key file, decrypted with its passphrase when it has one (asked once; a wrong one is said so). */
async function privateKey(hop: SshHop, name: string, deps: TunnelDeps): Promise<Partial<ConnectConfig>> {
  if (!hop.keyFile)
    throw new AgentError(
      'CONFIG_INVALID',
      `${name} logs in with a key file, and none is set.`,
      "Set keyFile in the connection's ssh settings.",
    );
  let data: Buffer;
  try {
    data = readFileSync(hop.keyFile);
  } catch (error) {
    throw new AgentError(
      'SSH_AUTH_FAILED',
      `Cannot read the key file ${hop.keyFile} of ${name}: ${(error as Error).message}.`,
      'Check the path and its permissions.',
    );
  }
  const plain = utils.parseKey(data);
  if (!(plain instanceof Error)) return { privateKey: data };
  if (!/passphrase|encrypted/i.test(plain.message)) {
    throw new AgentError(
      'SSH_AUTH_FAILED',
      `The key file ${hop.keyFile} of ${name} is not a private key ssh2 can read: ${plain.message}.`,
      'Use an OpenSSH or PEM private key (ssh-keygen -t ed25519).',
    );
  }
  const passphrase = await deps.secret?.({ kind: 'passphrase', hop, name });
  if (!passphrase)
    throw new AgentError(
      'SSH_AUTH_FAILED',
      `The key file ${hop.keyFile} of ${name} is encrypted, and no passphrase was given.`,
      'Enter its passphrase when asked.',
    );
  const decrypted = utils.parseKey(data, passphrase);
  if (decrypted instanceof Error) {
    throw new AgentError(
      'SSH_AUTH_FAILED',
      `Wrong passphrase for the key file ${hop.keyFile} of ${name}.`,
      'Try again with the passphrase of that key (ssh-keygen -y -f KEYFILE checks it).',
    );
  }
  return { privateKey: data, passphrase };
}

function hopError(error: Error & { level?: string; code?: string }, hop: SshHop, name: string): AgentError {
  const options = { cause: error };
  if (error.level === 'client-authentication') {
    return new AgentError(
      'SSH_AUTH_FAILED',
      `${name} refused the login of "${hop.user}" by ${hop.auth === 'key' ? `the key ${hop.keyFile ?? ''}` : hop.auth === 'agent' ? 'the keys of ssh-agent' : 'password'}.`,
      'Check that the public key is in ~/.ssh/authorized_keys of that user on the host (or the password), and the user name.',
      options,
    );
  }
  if (error.level === 'client-timeout') {
    return new AgentError(
      'SSH_UNREACHABLE',
      `${name} did not answer in time (SSH handshake timed out).`,
      'Is the host up, and is a firewall or VPN in the way?',
      options,
    );
  }
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED')
    return new AgentError(
      'SSH_UNREACHABLE',
      `Cannot reach ${name} (connection refused).`,
      'Is sshd running on that host and port?',
      options,
    );
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new AgentError(
      'SSH_UNREACHABLE',
      `The host name of ${name} could not be resolved.`,
      'Check the spelling of the SSH host.',
      options,
    );
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    return new AgentError(
      'SSH_UNREACHABLE',
      `Cannot reach ${name} (${code}).`,
      'Is the host up, and is a firewall or VPN in the way?',
      options,
    );
  return new AgentError(
    'SSH_TUNNEL_FAILED',
    `${name} failed: ${error.message}`,
    'Check the SSH settings of the connection.',
    options,
  );
}
