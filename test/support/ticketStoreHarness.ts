/**
 * The two ticket stores (files, Redis) behind one harness, for the tests that hold both to the same contract:
 * stores opened on the same tickets as separate processes would, and the stored JSON read or edited behind
 * their backs.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTicketStore } from '../../src/core/approvals/fileTicketStore';
import { openRedisTicketStore } from '../../src/core/approvals/redisTicketStore';
import type { Ticket } from '../../src/core/approvals/ticket';
import type { TicketStore } from '../../src/core/approvals/ticketStore';
import { silentLogger } from '../../src/core/platform/logger';
import { connectRedis, dropRedisPrefix, REDIS_URL, redisPrefix } from './services';

/** A stored ticket's JSON, with whatever else it holds. */
export type RawTicket = Record<string, unknown> & Ticket;

export interface StoreHarness {
  /** Another store on the same tickets: a separate object, connection, watcher — as another process has. */
  open(): Promise<TicketStore>;
  /** The stored JSON, read behind the store's back. */
  raw(id: string): Promise<RawTicket>;
  /** Edits a stored ticket's JSON behind the store's back. */
  tamper(id: string, edit: (ticket: RawTicket) => void): Promise<void>;
  /** Removes the live index, as a store written by a version without one has none. */
  dropLiveIndex(): Promise<void>;
  cleanup(): Promise<void>;
}

/** Tickets in a folder of their own (`prefix`: its name in the temp folder). A long poll: only the watch wakes a waiter. */
export async function fileStoreHarness(prefix = 'pgagent-approvals-'): Promise<StoreHarness> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const path = (id: string) => join(dir, `${id}.json`);
  const raw = async (id: string) => JSON.parse(await readFile(path(id), 'utf8')) as RawTicket;
  return {
    open: () => Promise.resolve(new FileTicketStore(dir, { pollMs: 60_000 })),
    raw,
    async tamper(id, edit) {
      const ticket = await raw(id);
      edit(ticket);
      await writeFile(path(id), JSON.stringify(ticket, null, 2));
    },
    dropLiveIndex: () => rm(join(dir, 'live'), { recursive: true, force: true }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Tickets on Redis under a key prefix of their own. A long poll: only pub/sub wakes a waiter. */
export async function redisStoreHarness(): Promise<StoreHarness> {
  const prefix = redisPrefix('pgagent-test');
  const admin = await connectRedis();
  const key = (id: string) => `${prefix}ticket:${id}`;
  const raw = async (id: string) => JSON.parse((await admin.get(key(id))) ?? 'null') as RawTicket;
  return {
    open: () => openRedisTicketStore(REDIS_URL, { prefix, logger: silentLogger, pollMs: 60_000 }),
    raw,
    async tamper(id, edit) {
      const ticket = await raw(id);
      edit(ticket);
      await admin.set(key(id), JSON.stringify(ticket), 'KEEPTTL');
    },
    async dropLiveIndex() {
      const keys = await admin.keys(`${prefix}live*`);
      if (keys.length > 0) await admin.del(...keys);
    },
    cleanup: () => dropRedisPrefix(admin, prefix),
  };
}

/**
 * Stores on a fresh harness per test: `setUp` (beforeEach) makes the harness and opens the test's store, `open`
 * another store on the same tickets, `tearDown` (afterEach) closes every store opened and cleans up.
 */
export function storesOn(make: () => Promise<StoreHarness>) {
  let harness: StoreHarness | undefined;
  const opened: TicketStore[] = [];
  const open = async (): Promise<TicketStore> => {
    if (!harness) throw new Error('storesOn: open() before setUp()');
    const store = await harness.open();
    opened.push(store);
    return store;
  };
  return {
    open,
    setUp: async (): Promise<{ harness: StoreHarness; store: TicketStore }> => {
      harness = await make();
      return { harness, store: await open() };
    },
    tearDown: async (): Promise<void> => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      await harness?.cleanup();
    },
  };
}
