/**
 * Approval tickets as readable JSON files in `.pgagent/approvals/` (SPEC §4), for workspaces without
 * Redis: atomic writes, and a lock file per ticket so transitions are atomic across processes.
 */
import { randomBytes } from 'node:crypto';
import { watch } from 'node:fs';
import { link, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TICKET_ID_SOURCE } from '../../shared/ids';
import { AgentError } from '../platform/errors';
import { createFileWhole, writeFileAtomicDurable } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';
import { namesIn } from '../fs/listDir';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';
import type { Ticket, TicketStatus } from './ticket';
import {
  buildTicket,
  expireRule,
  isExpiredAt,
  isLive,
  isSettled,
  liveIndexName,
  matchKeyOf,
  newestFirst,
  ticketNotFound,
} from './ticketRules';
import type { NewTicket, TicketStore } from './ticketStore';
import { assertTicketId, newTicketId, parseTicket } from './ticketStore';
import type { TicketRule } from './ruleTicketStore';
import { RuleTicketStore } from './ruleTicketStore';

export interface FileTicketStoreOptions {
  logger?: Logger;
  /** A lock older than this is taken to be left by a crashed process and is broken. */
  staleLockMs?: number;
  /** Slow re-read while waiting for a decision, in case the directory watch misses an event. */
  pollMs?: number;
}

const TICKET_FILE = new RegExp(`^(${TICKET_ID_SOURCE})\\.json$`);
const TICKET_ID = new RegExp(`^${TICKET_ID_SOURCE}$`);

/**
 * An index entry whose ticket file is missing: a process is creating that ticket right now (the entry comes first),
 * or one died in between, which a minute later is the only explanation left.
 */
async function leftByCrash(entry: string, now: Date): Promise<boolean> {
  try {
    return now.getTime() - (await stat(entry)).mtimeMs > 60_000;
  } catch {
    return false;
  }
}

/** Thrown inside a transition when its lock was broken as stale: the transition starts over. */
class LockLost extends Error {}

interface HeldLock {
  /** Throws LockLost unless the lock file is still ours: checked right before a write is committed. */
  verify(): Promise<void>;
  release(): Promise<void>;
}

export class FileTicketStore extends RuleTicketStore implements TicketStore {
  protected readonly logger: Logger;
  private readonly staleLockMs: number;
  protected readonly pollMs: number;
  protected readonly where: string;
  private indexed = false;

  constructor(
    private readonly dir: string,
    options: FileTicketStoreOptions = {},
  ) {
    super();
    this.where = dir;
    this.logger = options.logger ?? silentLogger;
    this.staleLockMs = options.staleLockMs ?? 5000;
    this.pollMs = options.pollMs ?? 5000;
  }

  async create(input: NewTicket): Promise<Ticket> {
    await mkdir(this.dir, { recursive: true });
    for (;;) {
      const ticket = buildTicket(input, newTicketId());
      // The index entry first: one whose ticket never appeared (a crash in between) is dropped by findLive.
      await this.indexLive(ticket);
      // Never replaces an existing file: the ticket appears whole, and an id collision is noticed.
      if (await createFileWhole(this.path(ticket.id), `${JSON.stringify(ticket, null, 2)}\n`, { durable: true })) {
        this.logger.info('approval ticket created', { ticket: ticket.id, risk: ticket.risk, by: ticket.createdBy });
        return ticket;
      }
    }
  }

  async get(id: string, now: Date = new Date()): Promise<Ticket | undefined> {
    assertTicketId(id);
    const ticket = await this.read(id);
    if (!ticket) return undefined;
    if (isExpiredAt(ticket, now)) return this.transition(id, expireRule(now));
    return this.resolve(ticket);
  }

  async list(options: { status?: TicketStatus[]; now?: Date } = {}): Promise<Ticket[]> {
    const now = options.now ?? new Date();
    const names = await namesIn(this.dir);
    const tickets: Ticket[] = [];
    for (const name of names) {
      const id = TICKET_FILE.exec(name)?.[1];
      if (!id) continue;
      try {
        const ticket = await this.get(id, now);
        if (ticket && (!options.status || options.status.includes(ticket.status))) tickets.push(ticket);
      } catch (error) {
        // One damaged file must not hide every other ticket; it is refused again when someone uses it.
        this.logger.warn('unreadable approval ticket skipped', { ticket: id, error: String(error) });
      }
    }
    return tickets.sort(newestFirst);
  }

  async findLive(connection: string, key: string, now: Date = new Date()): Promise<Ticket[]> {
    await this.indexOlderTickets(now);
    const folder = join(this.liveDir, liveIndexName(connection, key));
    const found: Ticket[] = [];
    for (const id of await namesIn(folder)) {
      if (!TICKET_ID.test(id)) continue;
      let ticket: Ticket | undefined;
      try {
        ticket = await this.get(id, now);
      } catch (error) {
        this.logger.warn('unreadable approval ticket skipped', { ticket: id, error: String(error) });
        continue;
      }
      if (ticket ? isSettled(ticket) : await leftByCrash(join(folder, id), now)) {
        await unlink(join(folder, id)).catch(() => undefined); // never live again: the index forgets it
        continue;
      }
      if (!ticket) continue; // being created: its entry is written just before its file
      if (isLive(ticket) && ticket.connection === connection && matchKeyOf(ticket) === key) found.push(ticket);
    }
    return found.sort(newestFirst);
  }

  close(): Promise<void> {
    this.closing.abort();
    return Promise.resolve();
  }

  /** `approvals/live/<digest of connection and match key>/<ticket id>`: empty files, one per ticket. */
  private get liveDir(): string {
    return join(this.dir, 'live');
  }

  private async indexLive(ticket: Ticket): Promise<void> {
    const folder = join(this.liveDir, liveIndexName(ticket.connection, matchKeyOf(ticket)));
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, ticket.id), '');
  }

  /**
   * Tickets written before the index existed are indexed once per folder (marked by `live/.indexed`); two
   * processes doing it at once write the same empty files.
   */
  private async indexOlderTickets(now: Date): Promise<void> {
    if (this.indexed) return;
    const mark = join(this.liveDir, '.indexed');
    try {
      await stat(mark);
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
      for (const ticket of await this.list({ status: ['PENDING_APPROVAL', 'APPROVED'], now })) {
        await this.indexLive(ticket);
      }
      await mkdir(this.liveDir, { recursive: true });
      await writeFile(mark, '');
    }
    this.indexed = true;
  }

  private path(id: string): string {
    // Only ever called with ids that passed assertTicketId (or were generated), so no id escapes the folder.
    return join(this.dir, `${id}.json`);
  }

  private async read(id: string): Promise<Ticket | undefined> {
    let text: string;
    try {
      text = await readFile(this.path(id), 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      throw error;
    }
    return parseTicket(text, id, this.dir);
  }

  /** Read, apply a rule and write back under the ticket's lock; starts over if the lock was lost. */
  protected async transition(id: string, rule: TicketRule): Promise<Ticket> {
    for (;;) {
      const lock = await this.lock(id);
      try {
        const current = await this.read(id);
        if (!current) throw ticketNotFound(id, this.dir);
        const result = rule(current);
        if (result.changed) {
          // Committed only while the lock is still ours (verified right before the rename).
          await writeFileAtomicDurable(this.path(id), `${JSON.stringify(result.ticket, null, 2)}\n`, () =>
            lock.verify(),
          );
        }
        if (result.error) throw result.error;
        return result.ticket;
      } catch (error) {
        if (!(error instanceof LockLost)) throw error;
        this.logger.warn('ticket lock was broken as stale while held; starting over', { ticket: id });
      } finally {
        await lock.release();
      }
    }
  }

  /**
   * `<id>.lock`, created whole with link() (fails if it exists), holding a random token. A lock older than
   * staleLockMs is broken by renaming it aside and checking the token moved is the stale one, so two
   * processes breaking the same stale lock cannot both remove a fresh lock.
   */
  private async lock(id: string): Promise<HeldLock> {
    await mkdir(this.dir, { recursive: true });
    const lockPath = join(this.dir, `${id}.lock`);
    const token = randomBytes(12).toString('hex');
    const giveUpAt = Date.now() + this.staleLockMs * 4;
    for (;;) {
      // Written afresh each attempt: the time inside is when the lock was taken, which is what ages.
      if (
        await createFileWhole(
          lockPath,
          JSON.stringify({ token, pid: process.pid, host: hostname(), at: new Date().toISOString() }),
        )
      )
        break;
      await this.breakIfStale(lockPath);
      if (Date.now() > giveUpAt) {
        throw new AgentError(
          'INTERNAL',
          `Ticket ${id} stayed locked by another process for ${Math.round((this.staleLockMs * 4) / 1000)} s.`,
          `If no pg-agent or VS Code window is working on this ticket, delete ${lockPath} and try again.`,
        );
      }
      await sleep(2 + Math.random() * 10);
    }
    const ours = async () => (await readLock(lockPath))?.token === token;
    return {
      verify: async () => {
        if (!(await ours())) throw new LockLost();
      },
      release: async () => {
        if (await ours()) await unlink(lockPath).catch(() => undefined);
      },
    };
  }

  private async breakIfStale(lockPath: string): Promise<void> {
    const seen = await readLock(lockPath);
    if (!seen || Date.now() - seen.atMs < this.staleLockMs) return;
    const aside = `${lockPath}.${randomBytes(6).toString('hex')}.stale`;
    try {
      await rename(lockPath, aside);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return; // someone else broke it first
      throw error;
    }
    if ((await readLock(aside))?.token !== seen.token) {
      // We moved a fresh lock someone took after our look: put it back (link never overwrites).
      await link(aside, lockPath).catch(() => undefined);
    } else {
      this.logger.warn('broke a stale ticket lock', { lock: lockPath, ageMs: Math.round(Date.now() - seen.atMs) });
    }
    await unlink(aside).catch(() => undefined);
  }

  protected async watchTicket(id: string, onChange: () => void): Promise<() => void> {
    await mkdir(this.dir, { recursive: true });
    const file = `${id}.json`;
    const watcher = watch(this.dir, (_event, filename) => {
      // No name means the platform could not tell which file changed: re-read to be safe.
      if (filename === null || filename === file) onChange();
    });
    watcher.on('error', (error) => this.logger.warn('watching approvals failed; polling', { error: String(error) }));
    return () => watcher.close();
  }
}

/** A lock's token and age read in one go, so the lock judged stale is the lock that is moved aside. */
async function readLock(lockPath: string): Promise<{ token: string; atMs: number } | undefined> {
  let text: string;
  try {
    text = await readFile(lockPath, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'token' in parsed && 'at' in parsed) {
      const { token, at } = parsed;
      if (typeof token === 'string' && typeof at === 'string' && !Number.isNaN(Date.parse(at))) {
        return { token, atMs: Date.parse(at) };
      }
    }
  } catch {
    // Not written by us: fall through and judge it by its text and modification time.
  }
  try {
    return { token: text, atMs: (await stat(lockPath)).mtimeMs };
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
}
