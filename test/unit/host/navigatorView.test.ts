import { describe, expect, it } from 'vitest';
import type { PendingTicket } from '../../../src/host/ui/navigatorView';
import { firstLine, RECENT_ASKS_KEPT, waitingView, withAnswer } from '../../../src/host/ui/navigatorView';
import { RecentAsks } from '../../../src/host/ask/recentAsks';
import type { AnswerView, RecentAskView } from '../../../src/shared/protocol';

const AT = '2025-06-12T14:02:00.000Z';
const plan: PendingTicket = {
  id: 'tkt_aaaaaaaaaaaaaaaaaaaa',
  kind: 'plan',
  risk: 'LOW',
  createdBy: 'alice',
  createdAt: AT,
  plan: { jobId: 'job_0123456789abcdef', cycle: 2, title: 'Archive old orders' },
  sqlStart: '',
};
const teammate: PendingTicket = {
  id: 'tkt_bbbbbbbbbbbbbbbbbbbb',
  kind: 'write',
  risk: 'HIGH',
  createdBy: 'bob',
  createdAt: AT,
  sqlStart: '-- restock\n\n  UPDATE products SET stock = 0\nWHERE id = 1',
};
const jobWrite: PendingTicket = {
  id: 'tkt_cccccccccccccccccccc',
  kind: 'write',
  risk: 'LOW',
  createdBy: 'carol',
  createdAt: AT,
  sqlStart: 'DELETE FROM carts',
};
const mine: PendingTicket = {
  id: 'tkt_dddddddddddddddddddd',
  kind: 'write',
  risk: 'MEDIUM',
  createdBy: 'carol',
  createdAt: AT,
  sqlStart: 'UPDATE orders SET status = 1',
};

describe('waitingView', () => {
  it('names a plan by its job, a write by its first statement line, and says where each is decided', () => {
    const shown = waitingView([plan, teammate, jobWrite, mine], new Set([jobWrite.id, mine.id]), (id) =>
      id === jobWrite.id ? 'job_fedcba9876543210' : undefined,
    );
    expect(shown.map((w) => [w.kind, w.title, w.jobId, w.here])).toEqual([
      ['plan', 'Archive old orders', 'job_0123456789abcdef', false],
      ['write', 'UPDATE products SET stock = 0', null, false],
      ['write', 'DELETE FROM carts', 'job_fedcba9876543210', true],
      ['write', 'UPDATE orders SET status = 1', null, true],
    ]);
    expect(shown[1]).toMatchObject({ ticketId: teammate.id, risk: 'HIGH', createdBy: 'bob', createdAt: AT });
  });

  it('cuts a long first line', () => {
    expect(firstLine(`SELECT ${'x, '.repeat(60)}y`, 20)).toBe('SELECT x, x, x, x, …');
    expect(firstLine('  one line  ')).toBe('one line');
  });

  it('shows hidden characters as stand-ins and flags the item (issue 22, item 6)', () => {
    expect(firstLine("UPDATE t SET tag = 'x' /*\u001b[2K\rUPDATE t SET tag = 'y' */")).toBe(
      "⚠ hidden characters · UPDATE t SET tag = 'x' /*␛[2K␍UPDATE t SET tag = 'y' */",
    );
    expect(firstLine('DELETE FROM t\u202e')).toBe('⚠ hidden characters · DELETE FROM t⟨U+202E⟩');
    // Past the start the navigator is given: flagged by the ticket's count.
    expect(firstLine('DELETE FROM t', 80, true)).toBe('⚠ hidden characters · DELETE FROM t');
    const [item] = waitingView(
      [
        {
          id: 'tkt_h',
          kind: 'write',
          risk: 'LOW',
          createdBy: 'agent',
          createdAt: AT,
          sqlStart: 'DELETE FROM t',
          hiddenChars: 1,
        },
      ],
      new Set(),
      () => undefined,
    );
    expect(item?.title).toBe('⚠ hidden characters · DELETE FROM t');
  });
});

/** An ask's answer as the panel is sent it, before anything ran. */
const answerView = (threadId: string, status: AnswerView['status'], question = 'How many orders?'): AnswerView => ({
  threadId,
  question,
  status,
  sql: null,
  results: null,
  summary: null,
  executedRows: null,
  usage: { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
  error: null,
});

describe('withAnswer (recent asks)', () => {
  const now = () => new Date(AT);

  it('puts a new ask first, keeps the newest few, and updates a listed one in place', () => {
    let recent: RecentAskView[] = [];
    for (let i = 0; i < RECENT_ASKS_KEPT + 2; i++)
      recent = withAnswer(recent, answerView(`ask_${String(i % 10).repeat(16)}`, 'running', `q${i}`), now) ?? recent;
    expect(recent).toHaveLength(RECENT_ASKS_KEPT);
    expect(recent[0]?.question).toBe(`q${RECENT_ASKS_KEPT + 1}`);
    const updated = withAnswer(
      recent,
      answerView(recent[2]?.threadId ?? '', 'answered', recent[2]?.question),
      () => new Date(0),
    );
    expect(updated?.[2]).toEqual({ ...recent[2], status: 'answered' });
    expect(updated?.map((r) => r.threadId)).toEqual(recent.map((r) => r.threadId));
  });

  it('says nothing changed when the answer is the one listed, or when there is none', () => {
    const recent = withAnswer([], answerView('ask_0000000000000000', 'answered'), now) ?? [];
    expect(withAnswer(recent, answerView('ask_0000000000000000', 'answered'), now)).toBeUndefined();
    expect(withAnswer(recent, null, now)).toBeUndefined();
  });

  it('keeps the SQL an ask ran once it has one, so its rows can be fetched again later', () => {
    const running = withAnswer([], answerView('ask_0000000000000000', 'running'), now) ?? [];
    expect(running[0]).not.toHaveProperty('sql');
    const withSql = withAnswer(
      running,
      { ...answerView('ask_0000000000000000', 'answered'), sql: 'SELECT count(*) FROM orders' },
      now,
    );
    expect(withSql?.[0]).toMatchObject({ status: 'answered', sql: 'SELECT count(*) FROM orders' });
    expect(
      withAnswer(
        withSql ?? [],
        { ...answerView('ask_0000000000000000', 'answered'), sql: 'SELECT count(*) FROM orders' },
        now,
      ),
    ).toBeUndefined();
  });
});

describe('RecentAsks', () => {
  /** A Memento kept in memory, as VS Code's workspaceState would keep it. */
  const memento = (initial: unknown) => {
    const store = new Map<string, unknown>([['postgresAgent.recentAsks', initial]]);
    return {
      keys: () => [...store.keys()],
      get: <T>(key: string, fallback?: T) => (store.has(key) ? store.get(key) : fallback) as T,
      update: (key: string, value: unknown) => Promise.resolve(void store.set(key, value)),
      saved: () => store.get('postgresAgent.recentAsks'),
    };
  };

  it('comes back after a reload with only well-formed entries, and a run the reload stopped as cancelled', () => {
    const saved = [
      { threadId: 'ask_0000000000000000', question: 'How many orders?', status: 'answered', at: AT },
      { threadId: 'ask_1111111111111111', question: 'Delete order 6', status: 'running', at: AT },
      { threadId: '../../etc', question: 'forged', status: 'answered', at: AT },
      { threadId: 'ask_3333333333333333', question: 'odd SQL', status: 'answered', at: AT, sql: 42 },
      'not an entry',
    ];
    const m = memento(saved);
    const recent = new RecentAsks(m);
    expect(recent.list().map((r) => [r.threadId, r.status])).toEqual([
      ['ask_0000000000000000', 'answered'],
      ['ask_1111111111111111', 'cancelled'],
    ]);
    expect(new RecentAsks(memento({ not: 'a list' })).list()).toEqual([]);
  });

  it('saves a new ask once, and nothing when the answer shown did not change', () => {
    const m = memento([]);
    const recent = new RecentAsks(m);
    const answer = answerView('ask_2222222222222222', 'running', 'Top customers?');
    recent.observe(answer);
    const first = m.saved();
    recent.observe(answer);
    expect(m.saved()).toBe(first);
    recent.observe({ ...answer, status: 'answered' });
    expect((m.saved() as RecentAskView[]).map((r) => r.status)).toEqual(['answered']);
  });
});
