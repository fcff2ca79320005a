/**
 * `pg-agent guard --pool transaction`: at most `size` upstream sessions, shared by every client of the
 * guard. A client borrows one for a transaction (or a single statement outside one) through its
 * PooledUpstream; when all are busy it waits, in arrival order, at most `waitMs`, then gets a FATAL that
 * says so. The sessions are opened as the guard opens a client's own (session/upstream.ts: read-only by
 * default, the guard's credentials), when first needed, and kept while they live.
 */
import type { ServerTarget } from '../../core/db/connectionTarget';
import type { Logger } from '../../core/platform/logger';
import { openUpstream } from '../session/upstream';
import { PooledUpstream } from './pooledUpstream';
import type { PoolPort } from './pooledUpstream';
import { PoolServer } from './poolServer';
import { applySettingsSql, readSessionState, SESSION_STATE_SQL, startupSettings } from './sessionState';

export type PoolMode = 'session' | 'transaction';

export interface PoolOptions {
  size: number;
  /** How long a client waits for a session when all are busy. */
  waitMs: number;
  logger: Logger;
}

export interface PoolStats {
  size: number;
  /** Sessions open (or opening). */
  open: number;
  /** Sessions bound to a client now. */
  inUse: number;
  /** Clients waiting for a session. */
  waiting: number;
  /** Sessions kept by one client (LISTEN, WITH HOLD…). */
  pinned: number;
}

/** A client that waited too long for a session (SQLSTATE 53300, too_many_connections). */
class PoolTimeout extends Error {
  readonly code = '53300';
}

export class UpstreamPool implements PoolPort {
  private readonly idle: PoolServer[] = [];
  private readonly servers = new Set<PoolServer>();
  private opening = 0;
  private pinnedCount = 0;
  private readonly waiters: { resolve: (s: PoolServer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] =
    [];
  private baseline: Promise<{ parameters: [string, string][]; settings: Map<string, string> }> | undefined;
  private closed = false;

  constructor(
    private readonly target: ServerTarget,
    private readonly options: PoolOptions,
  ) {}

  stats(): PoolStats {
    const open = this.servers.size + this.opening;
    return {
      size: this.options.size,
      open,
      inUse: this.servers.size - this.idle.length,
      waiting: this.waiters.length,
      pinned: this.pinnedCount,
    };
  }

  /**
   * A new client's upstream session (what guardServer.ts gets from openUpstream in session mode). Start-up
   * settings other than application_name are checked on a pooled session now, as a server would at start-up.
   */
  async connect(forwarded: Readonly<Record<string, string>>): Promise<PooledUpstream> {
    const base = await this.ready();
    const settings = new Map(base.settings);
    const asked = startupSettings(forwarded);
    for (const [name, value] of asked) settings.set(name, value);
    const reported = new Map(base.parameters);
    if (asked.has('application_name')) reported.set('application_name', asked.get('application_name')!);
    if ([...asked.keys()].some((name) => name !== 'application_name')) {
      const server = await this.acquire();
      try {
        const sql = applySettingsSql(settings, server.settings);
        server.settings = new Map(settings);
        const answer = await server.query(`${sql ?? 'SELECT 1'}; ${SESSION_STATE_SQL}`);
        if (answer.error) throw new Error(answer.error.message);
        const state = readSessionState(answer.rows[answer.rows.length - 1] ?? []);
        server.settings = new Map(state.settings);
        for (const [name, value] of state.settings) settings.set(name, value);
        // What the server reports (TimeZone, DateStyle, IntervalStyle) as it spells it.
        for (const [name] of reported) {
          const value = state.settings.get(name.toLowerCase());
          if (value !== undefined) reported.set(name, value);
        }
      } catch (error) {
        this.discard(server);
        throw error;
      }
      this.release(server);
    }
    return new PooledUpstream(this, [...reported], settings);
  }

  tryAcquire(): PoolServer | undefined {
    if (this.waiters.length > 0) return undefined;
    return this.idle.pop();
  }

  acquire(): Promise<PoolServer> {
    const idle = this.tryAcquire();
    if (idle) return Promise.resolve(idle);
    if (this.closed) return Promise.reject(new Error('the guard is stopping'));
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(
            new PoolTimeout(
              `all ${this.options.size} upstream sessions of the guard's transaction pool stayed busy for ${this.options.waitMs / 1000} s` +
                (this.pinnedCount > 0
                  ? ` (${this.pinnedCount} kept by clients holding LISTEN, a cursor WITH HOLD, an advisory lock or a temporary table)`
                  : '') +
                ': raise --pool-size or --pool-timeout, or use --pool session',
            ),
          );
        }, this.options.waitMs),
      };
      this.waiters.push(waiter);
      this.grow();
    });
  }

  release(server: PoolServer): void {
    if (server.closed) return;
    if (this.closed) return server.close();
    const waiter = this.waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      return waiter.resolve(server);
    }
    this.idle.push(server);
  }

  /** A session in the middle of something its client left: closed (the server rolls it back), and replaced when needed. */
  discard(server: PoolServer): void {
    server.close();
    this.forget(server);
    this.grow();
  }

  pinned(delta: number): void {
    this.pinnedCount += delta;
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error('the guard is stopping'));
    }
    for (const server of this.servers) server.close();
  }

  /** The settings and parameters every pooled session starts with, read on the first one (opened now). */
  private ready(): Promise<{ parameters: [string, string][]; settings: Map<string, string> }> {
    this.baseline ??= (async () => {
      this.opening++;
      const server = await this.open(new Map());
      const answer = await server.query(SESSION_STATE_SQL);
      if (answer.error || !answer.rows[0]) throw new Error(answer.error?.message ?? 'no settings read');
      const settings = readSessionState(answer.rows[0]).settings;
      server.settings = new Map(settings);
      this.release(server);
      return { parameters: server.parameters, settings };
    })().catch((error: unknown) => {
      this.baseline = undefined;
      throw error;
    });
    return this.baseline;
  }

  /** A new session (its place counted in `opening` by the caller, given back here). */
  private async open(settings: Map<string, string>): Promise<PoolServer> {
    try {
      const session = await openUpstream(this.target, {});
      const server = new PoolServer(session, settings, (s) => this.forget(s));
      this.servers.add(server);
      return server;
    } finally {
      this.opening--;
    }
  }

  /** Opens a session for a waiter when there is room (the place is taken at once: one open per waiter). */
  private grow(): void {
    if (this.closed || this.waiters.length === 0 || this.servers.size + this.opening >= this.options.size) return;
    this.opening++;
    void this.ready()
      .then(
        ({ settings }) => this.open(settings),
        (error: unknown) => {
          this.opening--;
          throw error;
        },
      )
      .then(
        (server) => this.release(server),
        (error: unknown) => {
          this.options.logger.warn('guard pool could not open an upstream session', { error: String(error) });
          const waiter = this.waiters.shift();
          if (waiter) clearTimeout(waiter.timer);
          waiter?.reject(
            new Error(
              `the guard cannot reach its database now: ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
        },
      );
  }

  private forget(server: PoolServer): void {
    this.servers.delete(server);
    const at = this.idle.indexOf(server);
    if (at >= 0) this.idle.splice(at, 1);
  }
}
