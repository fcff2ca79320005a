// One behaviour suite for both approval ticket stores (workspace files, Redis), plus what is particular
// to each: path safety and readable files; key layout, tampering in Redis and Redis being down.
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { openRedisTicketStore } from '../../../../src/core/approvals/redisTicketStore';
import { sqlHash, TICKET_TTL_MS } from '../../../../src/core/approvals/ticket';
import { liveIndexName } from '../../../../src/core/approvals/ticketRules';
import type { NewTicket, TicketStore } from '../../../../src/core/approvals/ticketStore';
import { openTicketStore } from '../../../../src/core/approvals/openTicketStore';
import { AgentError } from '../../../../src/core/platform/errors';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ImpactReport } from '../../../../src/shared/impactReport';
import type { ErrorCode } from '../../../../src/shared/errorCodes';
import pg from 'pg';
import { databaseResolver } from '../../../../src/core/sql/executionResolver';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import { openDatabase } from '../../../../src/core/db/openDatabase';
import { DATABASE_URL, REDIS_URL, redisAvailable } from '../../../support/services';
import { closedPort } from '../../../support/scratchDatabase';
import { impactReport } from '../../../support/impactReports';
import type { StoreHarness } from '../../../support/ticketStoreHarness';
import { fileStoreHarness, redisStoreHarness, storesOn } from '../../../support/ticketStoreHarness';

const SQL = "UPDATE orders SET status = 'shipped' WHERE id = 42";
const CONNECTION = 'postgres://app@db:5432/shop';
/** What an executor claims with: the connection it runs on, its open transaction's id, who it is. */
const EXPECTED = { connection: CONNECTION, xid: '1000', by: 'dev' };

function impact(overrides: Partial<ImpactReport> = {}): ImpactReport {
  return impactReport({
    statements: [SQL],
    estimatedRows: 1,
    exactRows: 2,
    tables: [
      { schema: 'public', name: 'orders', via: 'direct', inserted: 0, updated: 1, deleted: 0 },
      { schema: 'public', name: 'order_log', via: 'trigger', inserted: 1, updated: 0, deleted: 0 },
    ],
    previewMs: 12.5,
    triggers: [{ table: 'public.orders', name: 'orders_log' }],
    ...overrides,
  });
}

function newTicket(overrides: Partial<NewTicket> = {}): NewTicket {
  return { sql: SQL, connection: CONNECTION, impact: impact(), createdBy: 'dev', ...overrides };
}

/** The AgentError a promise rejects with (anything else fails the test). */
async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error('expected an AgentError, but it succeeded');
}

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<AgentError> {
  const error = await agentError(promise);
  expect(error.code, error.message).toBe(code);
  return error;
}

function describeTicketStore(name: string, enabled: boolean, makeHarness: () => Promise<StoreHarness>): void {
  describe.runIf(enabled)(`${name} ticket store`, () => {
    let harness: StoreHarness;
    let store: TicketStore;
    const { open, setUp, tearDown } = storesOn(makeHarness);
    const approved = async (input: Partial<NewTicket> = {}) => {
      const ticket = await store.create(newTicket(input));
      return store.decide(ticket.id, { approve: true, by: 'alice' });
    };

    beforeEach(async () => ({ harness, store } = await setUp()));
    afterEach(() => tearDown());

    it('finds the live tickets of one statement on one database by key, newest first', async () => {
      const first = await store.create(newTicket({ now: new Date(Date.now() - 1000) }));
      const second = await store.create(newTicket());
      await store.create(newTicket({ sql: 'DELETE FROM orders WHERE id = 2' }));
      await store.create(newTicket({ connection: 'postgres://app@db:5432/other' }));
      const other = await open();
      expect((await other.findLive(CONNECTION, sqlHash(SQL))).map((t) => t.id)).toEqual([second.id, first.id]);
      await store.decide(first.id, { approve: true, by: 'alice' });
      await store.decide(second.id, { approve: false, by: 'bob' });
      expect((await other.findLive(CONNECTION, sqlHash(SQL))).map((t) => [t.id, t.status])).toEqual([
        [first.id, 'APPROVED'],
      ]);
      expect(await other.findLive('postgres://app@db:5432/nowhere', sqlHash(SQL))).toEqual([]);
    });

    it('finds a ticket made with a match key by that key only, and never an expired or spent one', async () => {
      const t0 = new Date(Date.now() - TICKET_TTL_MS - 60_000);
      await store.create(newTicket({ now: t0 })); // expired by now
      const keyed = await store.create(newTicket({ matchKey: 'templates:abc' }));
      expect((await store.findLive(CONNECTION, 'templates:abc')).map((t) => t.id)).toEqual([keyed.id]);
      expect(await store.findLive(CONNECTION, sqlHash(SQL))).toEqual([]);
      const run = await approved();
      expect((await store.findLive(CONNECTION, sqlHash(SQL))).map((t) => t.id)).toEqual([run.id]);
      await store.claim(run.id, { ...EXPECTED, xid: '42' });
      await store.finish(run.id, { ok: true, by: 'dev', xid: '42' });
      expect(await store.findLive(CONNECTION, sqlHash(SQL))).toEqual([]);
    });

    it('indexes tickets stored before the live index existed, once, then never lists the store again', async () => {
      const older = await store.create(newTicket());
      await harness.dropLiveIndex();
      const later = await open();
      const listed = vi.spyOn(later, 'list');
      expect((await later.findLive(CONNECTION, sqlHash(SQL))).map((t) => t.id)).toEqual([older.id]);
      expect(listed).toHaveBeenCalledTimes(1);
      const newer = await later.create(newTicket());
      expect((await later.findLive(CONNECTION, sqlHash(SQL))).map((t) => t.id)).toEqual([newer.id, older.id]);
      expect(listed).toHaveBeenCalledTimes(1);
    });

    it('creates a pending ticket and reads it back', async () => {
      const now = new Date();
      const created = await store.create(newTicket({ now, impact: impact({ risk: 'HIGH' }) }));
      expect(created.id).toMatch(/^tkt_[a-z2-7]{20}$/);
      expect(created).toMatchObject({
        status: 'PENDING_APPROVAL',
        sql: SQL,
        sqlHash: sqlHash(SQL),
        connection: CONNECTION,
        risk: 'HIGH',
        createdBy: 'dev',
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + TICKET_TTL_MS).toISOString(),
        history: [{ action: 'created', by: 'dev', at: now.toISOString() }],
      });
      expect(await (await open()).get(created.id)).toEqual(created);
      expect(await store.get('tkt_aaaaaaaaaaaaaaaaaaaa')).toBeUndefined();
    });

    it('records who approved, when, and why', async () => {
      const ticket = await store.create(newTicket());
      const at = new Date();
      const decided = await store.decide(ticket.id, {
        approve: true,
        by: 'alice',
        comment: 'checked the preview',
        now: at,
      });
      expect(decided.status).toBe('APPROVED');
      expect(decided.history.at(-1)).toEqual({
        action: 'approved',
        by: 'alice',
        at: at.toISOString(),
        comment: 'checked the preview',
      });
      expect(await store.get(ticket.id)).toEqual(decided);
    });

    it('records a rejection', async () => {
      const ticket = await store.create(newTicket());
      const rejected = await store.decide(ticket.id, { approve: false, by: 'bob', comment: 'no WHERE on prod' });
      expect(rejected.status).toBe('REJECTED');
      expect(rejected.history.map((e) => [e.action, e.by])).toEqual([
        ['created', 'dev'],
        ['rejected', 'bob'],
      ]);
    });

    it('refuses a second decision and names the first', async () => {
      const ticket = await store.create(newTicket());
      await store.decide(ticket.id, { approve: true, by: 'alice' });
      const second = await expectCode(store.decide(ticket.id, { approve: false, by: 'bob' }), 'APPROVAL_ALREADY_USED');
      expect(second.message).toContain('approved by alice');
      const afterReject = await store.create(newTicket());
      await store.decide(afterReject.id, { approve: false, by: 'bob' });
      const third = await expectCode(store.decide(afterReject.id, { approve: true, by: 'alice' }), 'APPROVAL_REJECTED');
      expect(third.message).toContain('rejected by bob');
      expect((await store.get(ticket.id))?.status).toBe('APPROVED');
    });

    it('lets exactly one of ten concurrent decisions from separate stores decide; later approvals only add', async () => {
      const ticket = await store.create(newTicket());
      const stores = await Promise.all(Array.from({ length: 10 }, () => open()));
      const results = await Promise.allSettled(
        stores.map((s, i) => s.decide(ticket.id, { approve: i % 2 === 0, by: `approver${i}` })),
      );
      const stored = await store.get(ticket.id);
      const first = stored?.decisions[0];
      expect(stored?.status).toBe(first?.approve ? 'APPROVED' : 'REJECTED');
      const winners = results.filter((r) => r.status === 'fulfilled');
      // A rejection ends it; after an approval, other people's approvals are added (two-person rules), rejections refused.
      expect(winners).toHaveLength(first?.approve ? 5 : 1);
      expect(stored?.decisions).toHaveLength(winners.length);
      expect(stored?.decisions.slice(1).every((d) => d.approve)).toBe(true);
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        expect(result.reason).toBeInstanceOf(AgentError);
        expect((result.reason as AgentError).code).toMatch(/APPROVAL_(ALREADY_USED|REJECTED)/);
      }
    });

    it('claims an approved ticket once, and refuses a replay', async () => {
      const ticket = await approved();
      const claimed = await store.claim(ticket.id, EXPECTED);
      expect(claimed.status).toBe('EXECUTING');
      expect(claimed.history.at(-1)?.action).toBe('claimed');
      await expectCode(store.claim(ticket.id, EXPECTED), 'APPROVAL_ALREADY_USED');
      await expectCode((await open()).claim(ticket.id, EXPECTED), 'APPROVAL_ALREADY_USED');
    });

    it('lets exactly one of ten concurrent claims from separate stores succeed', async () => {
      const ticket = await approved();
      const stores = await Promise.all(Array.from({ length: 10 }, () => open()));
      const results = await Promise.allSettled(stores.map((s) => s.claim(ticket.id, EXPECTED)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect((result.reason as AgentError).code).toBe('APPROVAL_ALREADY_USED');
      }
      const stored = await store.get(ticket.id);
      expect(stored?.status).toBe('EXECUTING');
      expect(stored?.history.filter((e) => e.action === 'claimed')).toHaveLength(1);
    });

    it('refuses a decision made on other SQL (stale) and keeps the ticket waiting', async () => {
      const ticket = await store.create(newTicket());
      const edited = `${SQL} OR true`;
      await expectCode(
        store.decide(ticket.id, { approve: true, by: 'alice', seenHash: sqlHash(edited) }),
        'APPROVAL_STALE',
      );
      expect((await store.get(ticket.id))?.status).toBe('PENDING_APPROVAL');
      const decided = await store.decide(ticket.id, { approve: true, by: 'alice', seenHash: sqlHash(SQL) });
      expect(decided.decisions).toEqual([expect.objectContaining({ by: 'alice', approve: true, hash: sqlHash(SQL) })]);
      expect((await store.claim(ticket.id, EXPECTED)).status).toBe('EXECUTING');
    });

    it('refuses a ticket whose stored SQL was altered behind its hash, or with its hash', async () => {
      const ticket = await approved();
      await harness.tamper(ticket.id, (t) => {
        t.sql = 'DELETE FROM orders';
      });
      await expectCode(store.claim(ticket.id, EXPECTED), 'APPROVAL_SQL_MISMATCH');
      expect((await store.get(ticket.id))?.status).toBe('APPROVED');
      // Hash rewritten too: the approval was given on the old hash, so it approves nothing here.
      await harness.tamper(ticket.id, (t) => {
        t.sqlHash = sqlHash('DELETE FROM orders');
      });
      await expectCode(store.claim(ticket.id, EXPECTED), 'APPROVAL_SQL_MISMATCH');
      expect((await store.get(ticket.id))?.status).toBe('APPROVED');
    });

    it("adds a second person's approval to an approved ticket, once per person", async () => {
      const ticket = await approved();
      const twice = await (
        await open()
      ).decide(ticket.id, { approve: true, by: 'bob', comment: 'second pair of eyes' });
      expect(twice.status).toBe('APPROVED');
      expect(twice.decisions.map((d) => [d.by, d.approve])).toEqual([
        ['alice', true],
        ['bob', true],
      ]);
      await expectCode(store.decide(ticket.id, { approve: true, by: 'alice' }), 'APPROVAL_ALREADY_USED');
      await expectCode(store.decide(ticket.id, { approve: false, by: 'carol' }), 'APPROVAL_ALREADY_USED');
    });

    it('records the executing transaction and resolves a ticket left EXECUTING from pg_xact_status', async () => {
      const db = await openDatabase(parseConnectionUrl(DATABASE_URL), { sampleDbDir: '', logger: silentLogger });
      const holder = new pg.Client({ connectionString: DATABASE_URL });
      await holder.connect();
      try {
        const reader = await open();
        reader.setResolver(databaseResolver(() => Promise.resolve(db), silentLogger));
        for (const end of ['ROLLBACK', 'COMMIT'] as const) {
          const ticket = await approved();
          await holder.query('BEGIN');
          const xid = String(
            (await holder.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0]?.xid,
          );
          const claimed = await store.claim(ticket.id, { ...EXPECTED, xid });
          expect(claimed.execution).toMatchObject({ xid, by: 'dev' });
          // Its transaction is still open: nobody can tell yet, and nobody guesses.
          expect((await reader.get(ticket.id))?.status).toBe('EXECUTING');
          await holder.query(end);
          const resolved = await reader.get(ticket.id);
          expect(resolved?.status).toBe(end === 'COMMIT' ? 'EXECUTED' : 'FAILED');
          expect(resolved?.history.at(-1)?.comment).toContain(`transaction ${xid}`);
          // The executor's own late report of the same outcome is no error; the other one is refused.
          expect((await store.finish(ticket.id, { ok: end === 'COMMIT', by: 'dev', xid })).status).toBe(
            resolved?.status,
          );
          await expectCode(store.finish(ticket.id, { ok: end !== 'COMMIT', by: 'dev', xid }), 'APPROVAL_ALREADY_USED');
        }
      } finally {
        await holder.end();
        await db.close();
      }
    });

    it('refuses another database', async () => {
      const ticket = await approved();
      const error = await expectCode(
        store.claim(ticket.id, { ...EXPECTED, connection: 'postgres://app@prod:5432/shop' }),
        'APPROVAL_CONNECTION_MISMATCH',
      );
      expect(error.message).toContain(CONNECTION);
      expect((await store.get(ticket.id))?.status).toBe('APPROVED');
    });

    it('refuses to claim pending, rejected and unknown tickets', async () => {
      const pending = await store.create(newTicket());
      await expectCode(store.claim(pending.id, EXPECTED), 'APPROVAL_NOT_APPROVED');
      const rejected = await store.create(newTicket());
      await store.decide(rejected.id, { approve: false, by: 'bob' });
      await expectCode(store.claim(rejected.id, EXPECTED), 'APPROVAL_REJECTED');
      await expectCode(store.claim('tkt_aaaaaaaaaaaaaaaaaaaa', EXPECTED), 'APPROVAL_NOT_FOUND');
      await expectCode(store.decide('tkt_aaaaaaaaaaaaaaaaaaaa', { approve: true, by: 'alice' }), 'APPROVAL_NOT_FOUND');
    });

    it('expires pending and approved tickets', async () => {
      const t0 = new Date(Date.now() - 60_000);
      const later = new Date(t0.getTime() + 2000);
      const pending = await store.create(newTicket({ now: t0, ttlMs: 1000 }));
      const approvedTicket = await store.create(newTicket({ now: t0, ttlMs: 1000 }));
      await store.decide(approvedTicket.id, { approve: true, by: 'alice', now: t0 });

      const expired = await store.get(pending.id, later);
      expect(expired?.status).toBe('EXPIRED');
      expect(expired?.history.at(-1)).toMatchObject({ action: 'expired', at: pending.expiresAt });
      const listed = await store.list({ now: later });
      expect(listed.map((t) => [t.id, t.status])).toContainEqual([approvedTicket.id, 'EXPIRED']);
      await expectCode(store.decide(pending.id, { approve: true, by: 'alice', now: later }), 'APPROVAL_EXPIRED');

      const fresh = await store.create(newTicket({ now: t0, ttlMs: 1000 }));
      await store.decide(fresh.id, { approve: true, by: 'alice', now: t0 });
      await expectCode(store.claim(fresh.id, { ...EXPECTED, now: later }), 'APPROVAL_EXPIRED');
      const stored = await (await open()).get(fresh.id, t0);
      expect(stored?.status).toBe('EXPIRED'); // stored as expired, even for a reader whose clock says otherwise
    });

    it('releases the claim of an execution rolled back before it did anything (issue 25), only for that transaction', async () => {
      const ticket = await approved();
      const claimed = await store.claim(ticket.id, EXPECTED);
      const xid = claimed.execution?.xid ?? '';
      await expectCode(
        store.release?.(ticket.id, { ok: false, by: 'dev', xid: `${xid}9` }) ?? Promise.resolve(),
        'APPROVAL_ALREADY_USED',
      );
      const released = await (
        await open()
      ).release?.(ticket.id, { ok: false, by: 'dev', xid, comment: 'lock not free' });
      expect(released?.status).toBe('APPROVED');
      expect(released?.execution).toBeUndefined();
      expect((await store.get(ticket.id))?.history.map((h) => h.action)).toEqual([
        'created',
        'approved',
        'claimed',
        'released',
      ]);
      // The same approval runs later, once.
      expect((await store.claim(ticket.id, EXPECTED)).status).toBe('EXECUTING');
      await expectCode(
        store.release?.(ticket.id, { ok: false, by: 'dev', xid: 'another' }) ?? Promise.resolve(),
        'APPROVAL_ALREADY_USED',
      );
    });

    it('records the outcome of an execution once', async () => {
      const ok = await approved();
      await store.claim(ok.id, EXPECTED);
      const executed = await store.finish(ok.id, { ok: true, by: 'dev', comment: '1 row' });
      expect(executed.status).toBe('EXECUTED');
      expect(executed.history.at(-1)).toMatchObject({ action: 'executed', by: 'dev', comment: '1 row' });
      await expectCode(store.finish(ok.id, { ok: false, by: 'dev' }), 'APPROVAL_ALREADY_USED');
      await expectCode(store.claim(ok.id, EXPECTED), 'APPROVAL_ALREADY_USED');

      const failing = await approved();
      await expectCode(store.finish(failing.id, { ok: true, by: 'dev' }), 'INTERNAL');
      await store.claim(failing.id, EXPECTED);
      expect((await store.finish(failing.id, { ok: false, by: 'dev', comment: 'rolled back' })).status).toBe('FAILED');
    });

    it('wakes a waiting job when another store decides', async () => {
      const ticket = await store.create(newTicket());
      let done = false;
      const waiting = store.waitForDecision(ticket.id).finally(() => (done = true));
      await sleep(300);
      expect(done).toBe(false);
      await (await open()).decide(ticket.id, { approve: true, by: 'teammate', comment: 'ok from my machine' });
      const decided = await waiting;
      expect(decided.status).toBe('APPROVED');
      expect(decided.history.at(-1)?.by).toBe('teammate');
    }, 15_000);

    it('returns at once for a ticket decided before the wait, and on expiry', async () => {
      const decided = await approved();
      expect((await store.waitForDecision(decided.id)).status).toBe('APPROVED');
      const shortLived = await store.create(newTicket({ ttlMs: 300 }));
      expect((await store.waitForDecision(shortLived.id)).status).toBe('EXPIRED');
      await expectCode(store.waitForDecision('tkt_aaaaaaaaaaaaaaaaaaaa'), 'APPROVAL_NOT_FOUND');
    });

    it('stops waiting when aborted', async () => {
      const ticket = await store.create(newTicket());
      const controller = new AbortController();
      const waiting = store.waitForDecision(ticket.id, controller.signal);
      setTimeout(() => controller.abort(), 50);
      await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
      await expect(store.waitForDecision(ticket.id, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
      expect((await store.get(ticket.id))?.status).toBe('PENDING_APPROVAL');
    });

    it('lists newest first, filtered by status', async () => {
      const base = Date.now();
      const first = await store.create(newTicket({ now: new Date(base - 3000) }));
      const second = await store.create(newTicket({ now: new Date(base - 2000) }));
      const third = await store.create(newTicket({ now: new Date(base - 1000) }));
      await store.decide(second.id, { approve: true, by: 'alice' });
      expect((await (await open()).list()).map((t) => t.id)).toEqual([third.id, second.id, first.id]);
      expect((await store.list({ status: ['PENDING_APPROVAL'] })).map((t) => t.id)).toEqual([third.id, first.id]);
      expect((await store.list({ status: ['APPROVED', 'REJECTED'] })).map((t) => t.id)).toEqual([second.id]);
    });
  });
}

describeTicketStore('file', true, () => fileStoreHarness());
describeTicketStore('Redis', redisAvailable, redisStoreHarness);

describe('file ticket store on disk', () => {
  let dir: string;
  let store: FileTicketStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pgagent-approvals-'));
    store = new FileTicketStore(join(dir, 'approvals'));
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the index entry of a ticket being created (its file not written yet), forgets one a crash left', async () => {
    const ticket = await store.create(newTicket());
    const folder = join(dir, 'approvals', 'live', liveIndexName(CONNECTION, sqlHash(SQL)));
    // Another process between its entry and its file: the entry is there, the ticket not yet.
    const creating = 'tkt_cccccccccccccccccccc';
    await writeFile(join(folder, creating), '');
    expect((await store.findLive(CONNECTION, sqlHash(SQL))).map((t) => t.id)).toEqual([ticket.id]);
    expect((await readdir(folder)).sort()).toEqual([creating, ticket.id].sort());
    // A minute later it can only be a crash's leftover.
    const old = new Date(Date.now() - 120_000);
    await utimes(join(folder, creating), old, old);
    await store.findLive(CONNECTION, sqlHash(SQL));
    expect(await readdir(folder)).toEqual([ticket.id]);
  });

  it('refuses ids that would leave the folder', async () => {
    await writeFile(join(dir, 'secret.json'), '{}');
    const ids = [
      '../secret',
      'tkt_../../secret',
      '../../etc/passwd',
      'tkt_aaaaaaaaaaaaaaaaaaa/',
      'TKT_AAAAAAAAAAAAAAAAAAAA',
    ];
    for (const id of ids) {
      await expectCode(store.get(id), 'BAD_INPUT');
      await expectCode(store.decide(id, { approve: true, by: 'alice' }), 'BAD_INPUT');
      await expectCode(store.claim(id, EXPECTED), 'BAD_INPUT');
      await expectCode(store.waitForDecision(id), 'BAD_INPUT');
    }
    expect(await readdir(dir)).toEqual(['secret.json']);
  });

  it('writes each ticket as readable JSON named by its id', async () => {
    const ticket = await store.create(newTicket());
    await store.decide(ticket.id, { approve: true, by: 'alice', comment: 'fine' });
    expect((await readdir(join(dir, 'approvals'))).filter((f) => f !== 'live')).toEqual([`${ticket.id}.json`]);
    const text = await readFile(join(dir, 'approvals', `${ticket.id}.json`), 'utf8');
    expect(text).toContain(`\n  "id": "${ticket.id}",\n`);
    const json = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(
      [
        'id',
        'sql',
        'sqlHash',
        'connection',
        'impact',
        'risk',
        'createdBy',
        'createdAt',
        'expiresAt',
        'status',
        'history',
        'kind',
        'decisions',
      ].sort(),
    );
    expect(json).toMatchObject({ id: ticket.id, sql: SQL, status: 'APPROVED', impact: impact() });
  });

  it('refuses a file copied under another ticket id', async () => {
    const ticket = await store.create(newTicket());
    await store.decide(ticket.id, { approve: true, by: 'alice' });
    const copy = 'tkt_bbbbbbbbbbbbbbbbbbbb';
    await writeFile(
      join(dir, 'approvals', `${copy}.json`),
      await readFile(join(dir, 'approvals', `${ticket.id}.json`)),
    );
    await expectCode(store.claim(copy, EXPECTED), 'APPROVAL_NOT_FOUND');
    expect((await store.list()).map((t) => t.id)).toEqual([ticket.id]);
  });

  it('recovers a lock left by a crashed process', async () => {
    const ticket = await store.create(newTicket());
    const lock = join(dir, 'approvals', `${ticket.id}.lock`);
    const aMinuteAgo = new Date(Date.now() - 60_000).toISOString();
    await writeFile(lock, JSON.stringify({ token: 'crashed', pid: 1, host: 'gone', at: aMinuteAgo }));
    expect((await store.decide(ticket.id, { approve: true, by: 'alice' })).status).toBe('APPROVED');
    expect((await readdir(join(dir, 'approvals'))).filter((f) => f !== 'live')).toEqual([`${ticket.id}.json`]);
  });

  it('lets exactly one of several processes claim a ticket', async () => {
    const approvals = join(dir, 'approvals');
    const ticket = await store.create(newTicket());
    await store.decide(ticket.id, { approve: true, by: 'alice' });
    // Each worker is a separate node process with its own FileTicketStore; they start claiming together.
    const worker = join(dir, 'claimWorker.cjs');
    const storeModule = fileURLToPath(new URL('../../../../src/core/approvals/fileTicketStore.ts', import.meta.url));
    await build({
      stdin: {
        contents: `
          import { FileTicketStore } from ${JSON.stringify(storeModule)};
          const [dir, id, xid, connection, startAt] = process.argv.slice(2);
          setTimeout(() => {
            new FileTicketStore(dir)
              .claim(id, { connection, xid, by: 'worker' })
              .then(() => console.log('claimed'), (error) => console.log(error.code ?? String(error)));
          }, Number(startAt) - Date.now());`,
        loader: 'ts',
        resolveDir: dir,
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: worker,
      logLevel: 'silent',
    });
    const startAt = String(Date.now() + 1500);
    const outputs = await Promise.all(
      Array.from({ length: 6 }, () =>
        promisify(execFile)(process.execPath, [worker, approvals, ticket.id, EXPECTED.xid, CONNECTION, startAt]),
      ),
    );
    expect(outputs.map((o) => o.stdout.trim()).sort()).toEqual([
      ...Array<string>(5).fill('APPROVAL_ALREADY_USED'),
      'claimed',
    ]);
    expect((await store.get(ticket.id))?.history.filter((e) => e.action === 'claimed')).toHaveLength(1);
  });

  it('keeps tickets in files when no Redis is configured', async () => {
    const opened = await openTicketStore({ redisUrl: ' ', approvalsDir: join(dir, 'approvals'), logger: silentLogger });
    const ticket = await opened.create(newTicket());
    expect((await store.get(ticket.id))?.id).toBe(ticket.id);
    await opened.close();
  });
});

describe.runIf(redisAvailable)('Redis ticket store specifics', () => {
  it('keeps a ticket under its prefix, indexed, until expiry plus retention', async () => {
    const prefix = `pgagent-test:${randomBytes(6).toString('hex')}:`;
    const store = await openRedisTicketStore(REDIS_URL, { prefix, logger: silentLogger });
    const admin = new Redis(REDIS_URL);
    try {
      const ticket = await store.create(newTicket({ ttlMs: 60_000 }));
      const ttl = await admin.pttl(`${prefix}ticket:${ticket.id}`);
      expect(ttl).toBeGreaterThan(7 * 24 * 3600_000);
      expect(ttl).toBeLessThanOrEqual(7 * 24 * 3600_000 + 60_000);
      expect(await admin.zrange(`${prefix}tickets`, 0, -1)).toEqual([ticket.id]);
      await store.decide(ticket.id, { approve: true, by: 'alice' });
      expect(await admin.pttl(`${prefix}ticket:${ticket.id}`)).toBeGreaterThan(7 * 24 * 3600_000);
    } finally {
      await store.close();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
    }
  });

  it('fails fast with REDIS_UNREACHABLE when Redis is not there', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const error = await expectCode(openRedisTicketStore(url, { logger: silentLogger }), 'REDIS_UNREACHABLE');
    expect(error.message).toContain(`127.0.0.1`);
    expect(error.advice).toContain('REDIS_URL');
    // Configured but down is an error, never a quiet switch to files.
    await expectCode(
      openTicketStore({ redisUrl: url, approvalsDir: tmpdir(), logger: silentLogger }),
      'REDIS_UNREACHABLE',
    );
    await expectCode(openRedisTicketStore('localhost:6379', { logger: silentLogger }), 'CONFIG_INVALID');
  });

  it('reports REDIS_UNREACHABLE when Redis goes away during work', async () => {
    // A proxy in front of the real Redis, so this test can pull the plug without stopping Redis.
    const target = new URL(REDIS_URL);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as net.AddressInfo;
    const prefix = `pgagent-test:${randomBytes(6).toString('hex')}:`;
    const store = await openRedisTicketStore(`redis://127.0.0.1:${port}`, { prefix, logger: silentLogger });
    try {
      const ticket = await store.create(newTicket());
      proxy.close();
      for (const socket of sockets) socket.destroy();
      await expectCode(store.get(ticket.id), 'REDIS_UNREACHABLE');
      await expectCode(store.decide(ticket.id, { approve: true, by: 'alice' }), 'REDIS_UNREACHABLE');
    } finally {
      await store.close();
      const admin = new Redis(REDIS_URL);
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
    }
  });
});
