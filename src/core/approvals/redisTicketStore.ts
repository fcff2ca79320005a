/**
 * Approval tickets in Redis, shared by a team (SPEC §2, §5.3): every transition is one Lua script, so a
 * ticket is single use across machines, and each is published so a teammate's decision resumes a wait.
 */
import type { Redis } from 'ioredis';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { connectRedis, redactRedisUrl, redisUnreachable } from '../platform/redisClient';
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
import { TICKET_ID_SOURCE } from '../../shared/ids';
import type { NewTicket, TicketStore } from './ticketStore';
import { assertTicketId, newTicketId, parseTicket } from './ticketStore';
import type { TicketRule } from './ruleTicketStore';
import { RuleTicketStore } from './ruleTicketStore';

export interface RedisTicketStoreOptions {
  /** Key prefix, so several products or test runs share one Redis without meeting (CLI: PGAGENT_REDIS_PREFIX). */
  prefix?: string;
  logger: Logger;
  /** How long a ticket stays readable after it expires, so its history can still be looked at. */
  retentionMs?: number;
  /** Slow re-read while waiting for a decision, in case a pub/sub message is lost in a reconnect. */
  pollMs?: number;
  connectTimeoutMs?: number;
}

const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const TICKET_ID = new RegExp(`^${TICKET_ID_SOURCE}$`);

/**
 * Stores a new ticket unless its id is taken, indexes it (by time, and in its live set for findLive, which
 * lives as long as its newest ticket) and announces it.
 * KEYS: ticket, index, live set. ARGV: json, key ttl ms, created-at ms, id, channel, message.
 */
const CREATE_LUA = `
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('SADD', KEYS[3], ARGV[4])
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1`;

/** Adds a ticket to a live set, which lives as long as its longest-lived ticket. KEYS: live set. ARGV: id, ttl ms. */
const INDEX_LUA = `
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/**
 * Every transition (decide, claim, note the undo file, finish, resolve, expire, release). The rules are checked in TypeScript against the exact
 * JSON read (ARGV[1]); the script writes only if the key still holds those bytes, so check and write are
 * one atomic step and of two racing transitions exactly one lands. As a second line it refuses any move
 * the state machine does not have. Returns 1 written, 0 changed meanwhile, -1 gone, -2 illegal move.
 * KEYS: ticket. ARGV: expected json, new json, channel, message.
 */
const TRANSITION_LUA = `
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
local moves = {
  PENDING_APPROVAL = { APPROVED = true, REJECTED = true, EXPIRED = true },
  APPROVED = { APPROVED = true, EXECUTING = true, EXPIRED = true },
  EXECUTING = { EXECUTING = true, EXECUTED = true, FAILED = true, APPROVED = true },
}
local from = cjson.decode(current).status
local to = cjson.decode(ARGV[2]).status
if not (moves[from] and moves[from][to]) then return -2 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;

/** Errors from Redis as the errors a person can act on; ours pass through. */
function toStoreError(where: string, error: unknown): Error {
  if (error instanceof AgentError) return error;
  const connectionReply = /^(NOAUTH|WRONGPASS|LOADING|MASTERDOWN)/;
  if (error instanceof Error && error.name === 'ReplyError' && !connectionReply.test(error.message)) {
    return new AgentError('INTERNAL', `Redis at ${where} refused a ticket command: ${error.message}`, undefined, {
      cause: error,
    });
  }
  // Anything else is the connection: refused, closed, timed out, not authenticated, still loading.
  return redisUnreachable(where, error, 'tickets');
}

export class RedisTicketStore extends RuleTicketStore implements TicketStore {
  private readonly prefix: string;
  protected readonly logger: Logger;
  private readonly retentionMs: number;
  protected readonly pollMs: number;
  protected readonly where: string;
  private readonly listeners = new Map<string, Set<() => void>>();
  private subscriber: Promise<Redis> | undefined;
  private indexed = false;

  /** Takes a connected client (see openRedisTicketStore) and owns it from then on. */
  constructor(
    private readonly redis: Redis,
    url: string,
    options: RedisTicketStoreOptions,
  ) {
    super();
    this.prefix = options.prefix ?? 'pgagent:';
    this.logger = options.logger;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.pollMs = options.pollMs ?? 15_000;
    this.where = redactRedisUrl(url);
  }

  private key(id: string): string {
    return `${this.prefix}ticket:${id}`;
  }

  private get indexKey(): string {
    return `${this.prefix}tickets`;
  }

  private liveKey(connection: string, key: string): string {
    return `${this.prefix}live:${liveIndexName(connection, key)}`;
  }

  private get channel(): string {
    return `${this.prefix}ticket-events`;
  }

  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw toStoreError(this.where, error);
    }
  }

  async create(input: NewTicket): Promise<Ticket> {
    return this.run(async () => {
      for (;;) {
        const ticket = buildTicket(input, newTicketId());
        // A relative TTL (the ticket's lifetime plus retention), so no caller's clock or injected now can cut it short.
        const keyTtlMs = Date.parse(ticket.expiresAt) - Date.parse(ticket.createdAt) + this.retentionMs;
        const created = await this.redis.eval(
          CREATE_LUA,
          3,
          this.key(ticket.id),
          this.indexKey,
          this.liveKey(ticket.connection, matchKeyOf(ticket)),
          JSON.stringify(ticket),
          String(keyTtlMs),
          String(Date.parse(ticket.createdAt)),
          ticket.id,
          this.channel,
          JSON.stringify({ id: ticket.id, status: ticket.status }),
        );
        if (created === 1) {
          this.logger.info('approval ticket created', { ticket: ticket.id, risk: ticket.risk, by: ticket.createdBy });
          return ticket;
        }
      }
    });
  }

  async get(id: string, now: Date = new Date()): Promise<Ticket | undefined> {
    assertTicketId(id);
    return this.run(async () => {
      const text = await this.redis.get(this.key(id));
      if (text === null) return undefined;
      const ticket = parseTicket(text, id, this.where);
      if (isExpiredAt(ticket, now)) return this.transition(id, expireRule(now));
      return this.resolve(ticket);
    });
  }

  async list(options: { status?: TicketStatus[]; now?: Date } = {}): Promise<Ticket[]> {
    const now = options.now ?? new Date();
    return this.run(async () => {
      const ids = await this.redis.zrevrange(this.indexKey, 0, -1);
      const tickets: Ticket[] = [];
      const gone: string[] = [];
      for (let start = 0; start < ids.length; start += 200) {
        const chunk = ids.slice(start, start + 200);
        const texts = await this.redis.mget(chunk.map((id) => this.key(id)));
        for (const [i, id] of chunk.entries()) {
          const text = texts[i];
          if (text === null || text === undefined) {
            gone.push(id); // the key's retention ran out: drop it from the index too
            continue;
          }
          try {
            let ticket = parseTicket(text, id, this.where);
            if (isExpiredAt(ticket, now)) ticket = await this.transition(id, expireRule(now));
            else ticket = await this.resolve(ticket);
            if (!options.status || options.status.includes(ticket.status)) tickets.push(ticket);
          } catch (error) {
            // One damaged ticket must not hide every other; it is refused again when someone uses it.
            if (error instanceof AgentError && error.code === 'REDIS_UNREACHABLE') throw error;
            this.logger.warn('unreadable approval ticket skipped', { ticket: id, error: String(error) });
          }
        }
      }
      if (gone.length > 0) await this.redis.zrem(this.indexKey, ...gone);
      return tickets.sort(newestFirst);
    });
  }

  async findLive(connection: string, key: string, now: Date = new Date()): Promise<Ticket[]> {
    await this.indexOlderTickets(now);
    return this.run(async () => {
      const setKey = this.liveKey(connection, key);
      const ids = (await this.redis.smembers(setKey)).filter((id) => TICKET_ID.test(id));
      const found: Ticket[] = [];
      const forget: string[] = [];
      const texts = ids.length > 0 ? await this.redis.mget(ids.map((id) => this.key(id))) : [];
      for (const [i, id] of ids.entries()) {
        const text = texts[i];
        if (text === null || text === undefined) {
          forget.push(id);
          continue;
        }
        try {
          let ticket = parseTicket(text, id, this.where);
          ticket = isExpiredAt(ticket, now) ? await this.transition(id, expireRule(now)) : await this.resolve(ticket);
          if (isSettled(ticket)) forget.push(id);
          else if (isLive(ticket) && ticket.connection === connection && matchKeyOf(ticket) === key) found.push(ticket);
        } catch (error) {
          if (error instanceof AgentError && error.code === 'REDIS_UNREACHABLE') throw error;
          this.logger.warn('unreadable approval ticket skipped', { ticket: id, error: String(error) });
        }
      }
      if (forget.length > 0) await this.redis.srem(setKey, ...forget);
      return found.sort(newestFirst);
    });
  }

  /** Tickets stored before the live index existed are indexed once per prefix (marked by `<prefix>live-indexed`). */
  private async indexOlderTickets(now: Date): Promise<void> {
    if (this.indexed) return;
    const mark = `${this.prefix}live-indexed`;
    if ((await this.run(() => this.redis.exists(mark))) === 0) {
      for (const ticket of await this.list({ status: ['PENDING_APPROVAL', 'APPROVED'], now })) {
        const setKey = this.liveKey(ticket.connection, matchKeyOf(ticket));
        const ttlMs = Math.max(1, Date.parse(ticket.expiresAt) - now.getTime() + this.retentionMs);
        await this.run(() => this.redis.eval(INDEX_LUA, 1, setKey, ticket.id, String(ttlMs)));
      }
      await this.run(() => this.redis.set(mark, '1'));
    }
    this.indexed = true;
  }

  /** Every public transition names this store in a connection error. */
  protected override applyRule(id: string, rule: TicketRule): Promise<Ticket> {
    return this.run(() => this.transition(id, rule));
  }

  /**
   * Read, apply a rule, and let the script write it only if nothing changed since the read. A loser of a
   * race reads again and meets the winner's state, which the rule then refuses with a precise reason.
   */
  protected async transition(id: string, rule: TicketRule): Promise<Ticket> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const text = await this.redis.get(this.key(id));
      if (text === null) throw ticketNotFound(id, this.where);
      const result = rule(parseTicket(text, id, this.where));
      if (result.changed) {
        const written = await this.redis.eval(
          TRANSITION_LUA,
          1,
          this.key(id),
          text,
          JSON.stringify(result.ticket),
          this.channel,
          JSON.stringify({ id, status: result.ticket.status }),
        );
        if (written === 0) continue;
        if (written === -1) throw ticketNotFound(id, this.where);
        if (written !== 1) {
          throw new AgentError('INTERNAL', `Redis refused moving ticket ${id} to ${result.ticket.status}.`);
        }
      }
      if (result.error) throw result.error;
      return result.ticket;
    }
    throw new AgentError(
      'INTERNAL',
      `Ticket ${id} kept changing while it was being updated.`,
      'Try again; if it persists, something is writing the ticket in a loop.',
    );
  }

  protected async watchTicket(id: string, onChange: () => void): Promise<() => void> {
    await this.run(() => this.subscribe());
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  /** One subscriber connection per store (a subscribed connection can do nothing else), opened on first wait. */
  private subscribe(): Promise<Redis> {
    this.subscriber ??= (async () => {
      const subscriber = this.redis.duplicate();
      subscriber.on('error', (error: Error) => this.logger.debug('redis subscriber error', { error: error.message }));
      subscriber.on('message', (_channel: string, message: string) => this.onEvent(message));
      // After a reconnect ioredis subscribes again, but messages sent meanwhile are lost: re-read everything.
      subscriber.on('ready', () => this.notifyAll());
      try {
        await subscriber.connect();
        await subscriber.subscribe(this.channel);
      } catch (error) {
        subscriber.disconnect();
        this.subscriber = undefined;
        throw error;
      }
      return subscriber;
    })();
    return this.subscriber;
  }

  private onEvent(message: string): void {
    let id: unknown;
    try {
      id = (JSON.parse(message) as { id?: unknown }).id;
    } catch {
      return; // not one of ours; the channel is only a hint anyway, the ticket itself is re-read
    }
    if (typeof id !== 'string') return;
    for (const listener of this.listeners.get(id) ?? []) listener();
  }

  private notifyAll(): void {
    for (const set of this.listeners.values()) for (const listener of set) listener();
  }

  async close(): Promise<void> {
    this.closing.abort();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) {
      await subscriber.then(
        (client) => client.quit().catch(() => client.disconnect()),
        () => undefined,
      );
    }
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * Connects to Redis for tickets. Redis being down gives a prompt REDIS_UNREACHABLE, never a hang:
 * commands are not queued while disconnected and the first connection has a short timeout.
 */
export async function openRedisTicketStore(url: string, options: RedisTicketStoreOptions): Promise<RedisTicketStore> {
  const redis = await connectRedis(url, {
    logger: options.logger,
    purpose: 'tickets',
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  });
  options.logger.info('approval tickets in Redis', {
    redis: redactRedisUrl(url),
    prefix: options.prefix ?? 'pgagent:',
  });
  return new RedisTicketStore(redis, url, options);
}
