/**
 * The guard's native relay (native/guardRelay/, its README says exactly what it forwards): a thread of its own that,
 * while a client session is quiet, reads both of its sockets and forwards only what the session's fast path would
 * forward without judging (a simple Query whose verdict-cache key was passed from the cache; an extended batch of
 * the unnamed statement whose exact Parse was), and the upstream's answers to them. Anything else hands the session
 * back (clientSession.ts `nativeBack`) with every byte not yet passed on, in order.
 *
 * What it may pass comes only from here, registered after a pass from the verdict cache (`allow`, `allowParse`) and
 * tagged with the code version (reach engine) it was judged on: it holds only while that version is as fresh as the
 * verdict cache itself requires (judge.ts VERSION_MAX_AGE_MS), re-read every TRUST_TICK_MS; a new version or a
 * schema change committed here forgets it all. It is opt-in (PGAGENT_GUARD_NATIVE=1); without it or without the
 * built addon the guard runs as before, on its JavaScript path; the first client's session logs which path is in use.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Db } from '../../core/db/db';
import { schemaChanges } from '../../core/db/schemaChanges';
import { currentReachEngine, recentReachEngine } from '../../core/sql/reach/reachOf';
import { VERSION_MAX_AGE_MS } from '../judge/judge';
import { statementKey } from '../judge/verdictCache';

/** What the thread had not passed on when it handed a session back. */
export interface Released {
  fromClient: Buffer;
  fromUpstream: Buffer;
  toClient: Buffer;
  toUpstream: Buffer;
  /** One letter per forwarded message the upstream still owes an answer to ('q': a Query). */
  awaited: string;
  status: string;
  reason: string;
  /** [text id × 4 + what (COUNT_…), how many times it was forwarded]. */
  counts: [number, number][];
  /** The text id of the unnamed statement the thread last parsed, or -1. */
  statement: number;
  /** The thread bound the unnamed portal. */
  portal: boolean;
}

/** What a count of Released.counts is: a Query, a Parse, a Bind. */
export const COUNT_QUERY = 0;
export const COUNT_PARSE = 1;
export const COUNT_BIND = 2;

export interface Addon {
  start(back: (id: number) => void): void;
  adopt(clientFd: number, upstreamFd: number): number | undefined;
  release(id: number): Released | undefined;
  allow(key: Buffer, id: number): boolean;
  keyOf(text: Buffer): string | undefined;
  passes(message: Buffer): boolean;
  forget(): void;
  trust(ms: number): void;
}

export const ADDON_FILE = 'guardRelay.node';
const TRUST_TICK_MS = 10;
/** Texts kept (the addon keeps as many, and forgets them all when full). */
const MAX_TEXTS = 2000;

/** The addon beside the guard's script (or at `path`: tests name the build's). */
export function loadAddon(path?: string): { addon?: Addon; problem?: string } {
  // Beside the guard's own script only: never a folder of the working directory, which a cloned repository
  // could fill with a dist/guardRelay.node of its own (native code would run as the person).
  const candidates = [
    path,
    process.env.PGAGENT_GUARD_NATIVE_PATH,
    process.argv[1] ? join(dirname(process.argv[1]), ADDON_FILE) : undefined,
  ].filter((p): p is string => p !== undefined && existsSync(p));
  if (candidates.length === 0) return { problem: `${ADDON_FILE} is not built` };
  try {
    const load = createRequire(join(process.cwd(), 'package.json'));
    return { addon: load(candidates[0]!) as Addon };
  } catch (error) {
    return { problem: `${ADDON_FILE} did not load: ${error instanceof Error ? error.message : String(error)}` };
  }
}

export class NativeRelay {
  private readonly owners = new Map<number, (released: Released) => void>();
  /** Each allowed key and its id; `texts[id]` the first text passed with it. */
  private readonly ids = new Map<string, number>();
  /** Ids only grow (a session handed back later may name one the thread passed before a `forget`). */
  private readonly texts = new Map<number, { sql: string; paramTypes: number[] }>();
  private nextId = 0;
  private engine: object | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly addon: Addon,
    private readonly db: Db,
  ) {
    addon.start((id) => this.handBack(id));
    schemaChanges.subscribe(() => {
      this.forget();
      return Promise.resolve();
    });
  }

  /**
   * A Query's text the verdict cache passed just now as a read (judge.ts passedBefore): its key (verdictCache.ts
   * statementKey) is the thread's to pass, for as long as its code version stays fresh.
   */
  allow(sql: string): void {
    const key = statementKey(sql)?.key;
    if (key !== undefined) this.add(key, sql, []);
  }

  /**
   * A Parse of the unnamed statement passed just now from the verdict cache (extendedProtocol.ts parseFast): its
   * exact bytes after the type and length (name, text, parameter types) are the thread's to pass.
   */
  allowParse(raw: Uint8Array, sql: string, paramTypes: number[]): void {
    this.add(`P${Buffer.from(raw.buffer, raw.byteOffset + 5, raw.length - 5).toString('latin1')}`, sql, paramTypes);
  }

  private add(key: string, sql: string, paramTypes: number[]): void {
    const recent = recentReachEngine(this.db, VERSION_MAX_AGE_MS);
    if (!recent) return;
    if (recent.engine !== this.engine) this.forget();
    if (this.ids.has(key)) return;
    if (this.ids.size >= MAX_TEXTS) this.forget();
    this.engine = recent.engine;
    const id = this.nextId++;
    if (!this.addon.allow(Buffer.from(key, 'latin1'), id)) return;
    this.ids.set(key, id);
    this.texts.set(id, { sql, paramTypes });
    if (this.texts.size > 4 * MAX_TEXTS) this.texts.delete(this.texts.keys().next().value!);
    this.trust();
  }

  textOf(id: number): { sql: string; paramTypes: number[] } | undefined {
    return this.texts.get(id);
  }

  /** The thread takes both sockets now; `back` gets what it had not passed on when it hands them back. */
  adopt(clientFd: number, upstreamFd: number, back: (released: Released) => void): number | undefined {
    const id = this.addon.adopt(clientFd, upstreamFd);
    if (id === undefined) return undefined;
    this.owners.set(id, back);
    this.trust();
    this.timer ??= setInterval(() => this.trust(), TRUST_TICK_MS).unref();
    return id;
  }

  /** The session is JavaScript's again at once (it must write, or it ends). */
  release(id: number): Released | undefined {
    this.owners.delete(id);
    if (this.owners.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    return this.addon.release(id);
  }

  private handBack(id: number): void {
    const back = this.owners.get(id);
    if (!back) return;
    const released = this.release(id);
    if (released) back(released);
  }

  /** The texts hold as long as their code version is fresh (as judge.ts passedBefore reads it), no longer. */
  private trust(): void {
    const recent = recentReachEngine(this.db, VERSION_MAX_AGE_MS);
    if (!recent || recent.engine !== this.engine) {
      this.addon.trust(0);
      // Checked again now, as the verdict cache's path does; the next tick trusts what it finds.
      if (this.owners.size > 0)
        void currentReachEngine(this.db, { versionMaxAgeMs: VERSION_MAX_AGE_MS / 2 }).catch(() => undefined);
      return;
    }
    this.addon.trust(VERSION_MAX_AGE_MS - recent.checkedMsAgo);
    if (recent.checkedMsAgo > VERSION_MAX_AGE_MS / 2)
      void currentReachEngine(this.db, { versionMaxAgeMs: VERSION_MAX_AGE_MS / 2 }).catch(() => undefined);
  }

  private forget(): void {
    this.addon.forget();
    this.ids.clear();
    this.engine = undefined;
  }
}

let relays: WeakMap<Db, NativeRelay> | undefined;
let loaded: { addon?: Addon; problem?: string } | undefined;

/** The native relay for the guard's database, or undefined (the JavaScript path); the first call logs which. */
export function nativeRelayOf(db: Db, log?: (message: string) => void): NativeRelay | undefined {
  if (!loaded) {
    // Opt-in while it is new: the JavaScript path stays the default until the relay has been reviewed as a whole.
    loaded =
      process.env.PGAGENT_GUARD_NATIVE === '1' ? loadAddon() : { problem: 'off (PGAGENT_GUARD_NATIVE=1 turns it on)' };
    log?.(
      loaded.addon
        ? 'guard hot path: native relay (guardRelay.node)'
        : `guard hot path: JavaScript (native relay unavailable: ${loaded.problem})`,
    );
  }
  if (!loaded.addon) return undefined;
  relays ??= new WeakMap();
  let relay = relays.get(db);
  if (!relay) {
    relay = new NativeRelay(loaded.addon, db);
    relays.set(db, relay);
  }
  return relay;
}
