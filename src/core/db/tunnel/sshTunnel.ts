/**
 * A connection's SSH tunnel: the chain of hops (jump hosts, then the SSH host), opened on first use and
 * again after it drops, and a channel through it to the database for each `pg` connection. One tunnel per
 * route in a process, shared by every pool that uses it and closed when the last one lets go.
 */
import type { Duplex } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { AgentError } from '../../platform/errors';
import type { SshTunnelConfig } from './sshConfig';
import { hopsOf, nameHop, tunnelKey } from './sshConfig';
import type { TunnelDeps } from './sshHop';
import { connectHop } from './sshHop';

export type TunnelState = 'down' | 'connecting' | 'up';

export class SshTunnel {
  private chain: Promise<Client[]> | undefined;
  private clients: Client[] = [];
  private closed = false;
  private listeners = new Set<(state: TunnelState) => void>();
  state: TunnelState = 'down';
  /** Why the tunnel last went down, for the error of a query it cut. */
  lastDrop: string | undefined;

  private readonly deps: TunnelDeps;
  /** Passphrases and passwords typed for this tunnel, kept in memory for its reconnects; dropped when a login fails. */
  private readonly secrets = new Map<string, string | undefined>();

  constructor(
    readonly config: SshTunnelConfig,
    deps: TunnelDeps,
  ) {
    const ask = deps.secret;
    this.deps = ask
      ? {
          ...deps,
          secret: async (request) => {
            const key = `${request.kind}:${request.name}`;
            if (!this.secrets.has(key)) this.secrets.set(key, await ask(request));
            return this.secrets.get(key);
          },
        }
      : deps;
  }

  /** "deploy@bastion:22" or "jump → deploy@bastion:22": where the tunnel goes, for a status bar. */
  get route(): string {
    return hopsOf(this.config)
      .map((hop) => `${hop.user}@${hop.host}:${hop.port ?? 22}`)
      .join(' → ');
  }

  onState(listener: (state: TunnelState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Opens the chain of hops now (asking what must be asked), unless it is up. */
  async open(): Promise<void> {
    if (this.closed)
      throw new AgentError('SSH_TUNNEL_FAILED', 'The SSH tunnel was closed.', 'Open the connection again.');
    await this.connect();
  }

  /** A channel from the SSH host to host:port (the database as the SSH host sees it). */
  async forward(host: string, port: number): Promise<ClientChannel> {
    if (this.closed)
      throw new AgentError('SSH_TUNNEL_FAILED', 'The SSH tunnel was closed.', 'Open the connection again.');
    const clients = await this.connect();
    const last = clients[clients.length - 1];
    if (!last) throw new AgentError('SSH_TUNNEL_FAILED', 'The SSH tunnel has no hop.');
    const hops = hopsOf(this.config);
    return new Promise<ClientChannel>((resolve, reject) => {
      last.forwardOut('127.0.0.1', 0, host, port, (error, channel) => {
        if (error) {
          reject(
            new AgentError(
              'SSH_TUNNEL_FAILED',
              `${nameHop(hops, hops.length - 1)} could not open a connection to the database at ${host}:${port}: ${error.message}.`,
              'The tunnel is up; check the database host and port as seen from the SSH host, and that its sshd allows TCP forwarding (AllowTcpForwarding).',
              { cause: error },
            ),
          );
        } else {
          resolve(channel);
        }
      });
    });
  }

  private connect(): Promise<Client[]> {
    this.chain ??= this.openChain().catch((error: unknown) => {
      this.chain = undefined;
      this.setState('down');
      throw error;
    });
    return this.chain;
  }

  private async openChain(): Promise<Client[]> {
    this.setState('connecting');
    const hops = hopsOf(this.config);
    const clients: Client[] = [];
    try {
      for (const [index, hop] of hops.entries()) {
        const name = nameHop(hops, index);
        const previous = clients[index - 1];
        const sock = previous ? await this.channelTo(previous, hops, index) : undefined;
        const client = await connectHop(hop, name, this.deps, sock);
        clients.push(client);
        client.on('error', (error: Error) => {
          this.lastDrop = `${name}: ${error.message}`;
          this.deps.logger.warn('ssh hop failed', { hop: name, error: error.message });
        });
        client.on('close', () => this.dropped(client, name));
      }
    } catch (error) {
      for (const client of clients.reverse()) client.end();
      if (error instanceof AgentError && error.code === 'SSH_AUTH_FAILED') this.secrets.clear();
      throw error;
    }
    if (this.closed) {
      for (const client of [...clients].reverse()) client.end();
      throw new AgentError('SSH_TUNNEL_FAILED', 'The SSH tunnel was closed while it opened.');
    }
    this.clients = clients;
    this.lastDrop = undefined;
    this.setState('up');
    return clients;
  }

  /** The channel through `previous` to hop `index`, which the next SSH connection runs over. */
  private channelTo(previous: Client, hops: ReturnType<typeof hopsOf>, index: number): Promise<Duplex> {
    const hop = hops[index];
    if (!hop) throw new AgentError('SSH_TUNNEL_FAILED', 'The SSH tunnel has no such hop.');
    return new Promise<Duplex>((resolve, reject) => {
      previous.forwardOut('127.0.0.1', 0, hop.host, hop.port ?? 22, (error, channel) => {
        if (error) {
          reject(
            new AgentError(
              'SSH_UNREACHABLE',
              `Cannot reach ${nameHop(hops, index)} from ${nameHop(hops, index - 1)}: ${error.message}.`,
              'Check the host and port of that hop as seen from the one before it.',
              { cause: error },
            ),
          );
        } else {
          resolve(channel);
        }
      });
    });
  }

  /** A hop closed: the whole chain is gone; the next forward() opens it again. */
  private dropped(client: Client, name: string): void {
    if (!this.clients.includes(client)) return;
    this.lastDrop ??= `${name} closed the connection`;
    for (const other of [...this.clients].reverse()) if (other !== client) other.end();
    this.clients = [];
    this.chain = undefined;
    if (!this.closed) this.deps.logger.warn('ssh tunnel dropped', { route: this.route, why: this.lastDrop });
    this.setState('down');
  }

  close(): void {
    this.closed = true;
    for (const client of [...this.clients].reverse()) client.end();
    this.clients = [];
    this.chain = undefined;
    this.setState('down');
  }

  private setState(state: TunnelState): void {
    if (this.state === state) return;
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }
}

const open = new Map<string, { tunnel: SshTunnel; users: number }>();

/** The tunnel of this route, shared: each user calls release() once; the last one closes it. */
export function acquireTunnel(config: SshTunnelConfig, deps: TunnelDeps): { tunnel: SshTunnel; release: () => void } {
  const key = `${tunnelKey(config)} @ ${deps.knownHostsFile}`;
  let entry = open.get(key);
  if (!entry) {
    entry = { tunnel: new SshTunnel(config, deps), users: 0 };
    open.set(key, entry);
  }
  entry.users += 1;
  const held = entry;
  let released = false;
  return {
    tunnel: held.tunnel,
    release: () => {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users === 0) {
        open.delete(key);
        held.tunnel.close();
      }
    },
  };
}

/** How many tunnels this process holds open (tests assert nothing is left behind). */
export function openTunnelCount(): number {
  return open.size;
}
