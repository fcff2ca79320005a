/**
 * What a connection's SSH tunnel is, as saved in a profile (no secret in it: passphrases and passwords
 * come from SecretStorage, the terminal or ssh-agent): the hop that reaches the database, the jump hosts
 * before it (ProxyJump, in order), and how each one logs in.
 */

/** How a hop logs in: ssh-agent (SSH_AUTH_SOCK), a private key file (passphrase asked), or a password (asked). */
export type SshAuth = 'agent' | 'key' | 'password';

export interface SshHop {
  host: string;
  /** 22 when absent. */
  port?: number;
  user: string;
  auth: SshAuth;
  /** The private key file, for auth "key". */
  keyFile?: string;
}

export interface SshTunnelConfig extends SshHop {
  /** ProxyJump: hosts reached first, in order; the tunnel's own host is reached through the last of them. */
  jumpHosts?: SshHop[];
  /** Seconds between SSH keep-alive packets (default 15); three unanswered ones close the tunnel. */
  keepAliveSeconds?: number;
}

/** Every hop in the order they are connected: the jump hosts, then the tunnel's host. */
export function hopsOf(config: SshTunnelConfig): SshHop[] {
  const { jumpHosts, keepAliveSeconds: _keepAlive, ...last } = config;
  return [...(jumpHosts ?? []), last];
}

/** "user@host:port" of a hop, for messages and known_hosts. */
export function describeHop(hop: SshHop): string {
  return `${hop.user}@${hop.host}:${hop.port ?? 22}`;
}

/** "ssh hop 2 of 3, bastion (deploy@bastion.example.com:22)": which hop failed, said plainly. */
export function nameHop(hops: readonly SshHop[], index: number): string {
  const hop = hops[index];
  if (!hop) return 'the SSH tunnel';
  const role =
    index === hops.length - 1
      ? hops.length > 1
        ? 'the SSH host (last hop)'
        : 'the SSH host'
      : `jump host ${index + 1} of ${hops.length - 1}`;
  return `${role} ${describeHop(hop)}`;
}

/** One key for a tunnel's route: profiles with the same route share one tunnel. */
export function tunnelKey(config: SshTunnelConfig): string {
  return hopsOf(config)
    .map((hop) => `${describeHop(hop)}[${hop.auth}${hop.keyFile ? `:${hop.keyFile}` : ''}]`)
    .join(' -> ');
}

/** "user@host", "user@host:2222" or "user@[::1]:22" as written in a form; undefined when it is not one. */
export function parseHopAddress(text: string): { user: string; host: string; port?: number } | undefined {
  const match = /^([^@\s]+)@(\[[^\]]+\]|[^:@\s]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!match?.[1] || !match[2]) return undefined;
  const port = match[3] ? Number(match[3]) : undefined;
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { user: match[1], host: match[2].replace(/^\[(.*)\]$/, '$1'), ...(port !== undefined ? { port } : {}) };
}
