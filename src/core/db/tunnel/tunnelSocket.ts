/**
 * The socket `pg` writes to, carried by an SSH channel: `pg` calls connect(port, host) as on a TCP socket,
 * and gets the channel the tunnel opens to that address (TLS, when asked for, runs inside it, checked
 * against the database's own host name). When the tunnel drops, the error names the hop.
 */
import { Duplex } from 'node:stream';
import { AgentError } from '../../platform/errors';
import type { SshTunnel } from './sshTunnel';

export class TunnelSocket extends Duplex {
  private channel: Duplex | undefined;

  constructor(
    private readonly tunnel: SshTunnel,
    private readonly label: string,
  ) {
    // 'close' is emitted by _destroy one turn later: when TLS inside the channel fails (a certificate
    // refused), TLS destroys this socket first and reports its error after; `pg` must see that error,
    // not "Connection terminated unexpectedly" from a close that came first.
    super({ emitClose: false });
  }

  connect(port: number, host: string): this {
    this.tunnel.forward(host, port).then(
      (channel) => {
        if (this.destroyed) {
          channel.destroy();
          return;
        }
        this.channel = channel;
        channel.on('data', (chunk: Buffer) => {
          if (!this.push(chunk)) channel.pause();
        });
        channel.on('end', () => this.push(null));
        channel.on('close', () => {
          if (!this.destroyed) this.destroy(this.lostError());
        });
        channel.on('error', () => {
          if (!this.destroyed) this.destroy(this.lostError());
        });
        this.emit('connect');
      },
      (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
    );
    return this;
  }

  private lostError(): AgentError {
    const why = this.tunnel.lastDrop ?? `the SSH tunnel (${this.tunnel.route}) closed the channel`;
    return new AgentError(
      'DB_UNREACHABLE',
      `The connection to ${this.label} was lost: the SSH tunnel went down (${why}).`,
      'Nothing was committed. The next query opens the tunnel again.',
    );
  }

  override _read(): void {
    this.channel?.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.channel) {
      callback(new Error('The SSH channel is not open yet.'));
      return;
    }
    this.channel.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.channel?.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.channel?.destroy();
    callback(error);
    setImmediate(() => this.emit('close'));
  }

  // What `pg` calls on a net.Socket; meaningless on a channel (SSH keep-alive watches the tunnel).
  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }
}
