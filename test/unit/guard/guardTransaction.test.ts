/**
 * The pieces of "a transaction approved as a whole" (issue 24 P4) that exist so far: a transaction's
 * statements recorded with their templates (PostgreSQL's fingerprint, so a retry with other values matches
 * and a retry with another statement does not), and the effect bounds a retry must stay within.
 */
import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../../src/core/approvals/ticket';
import { exceededBounds } from '../../../src/guard/transaction/effectBounds';
import { recordStatement, TransactionRecord } from '../../../src/guard/transaction/transactionRecord';

async function recordOf(statements: [string, boolean, string?][]): Promise<TransactionRecord> {
  const record = new TransactionRecord();
  for (const [sql, read, template] of statements) record.add(await recordStatement(sql, read, template));
  return record;
}

const first = [
  ["INSERT INTO orders (customer) VALUES ('ann') RETURNING id", false],
  ['SELECT * FROM orders WHERE id = 41', true],
  ["UPDATE orders SET note = 'x' WHERE id = 41", false],
] as [string, boolean][];

describe('a transaction recorded through the guard', () => {
  it('matches a retry whose values differ (a fresh RETURNING id, new literals) by its templates', async () => {
    const approved = await recordOf(first);
    const retry = await recordOf([
      ["INSERT INTO orders (customer) VALUES ('bob') RETURNING id", false],
      ['SELECT * FROM orders WHERE id = 42', true],
      ["UPDATE orders SET note = 'y' WHERE id = 42", false],
    ]);
    expect(retry.templateKey()).toBe(approved.templateKey());
    expect(approved.writes.map((s) => s.sql)).toEqual([first[0]![0], first[2]![0]]);
  });

  it('matches the extended protocol: the Parse text with $n is the template, the bound values are what a person reads', async () => {
    const simple = await recordOf([["UPDATE orders SET note = 'x' WHERE id = 41", false]]);
    const extended = await recordOf([
      ["UPDATE orders SET note = 'z' WHERE id = '7'::int4", false, 'UPDATE orders SET note = $1 WHERE id = $2'],
    ]);
    expect(extended.templateKey()).toBe(simple.templateKey());
    expect(extended.statements[0]!.sql).toContain("'7'::int4");
  });

  it('does not match a retry with another statement, another order, one more statement, or a read turned write', async () => {
    const approved = (await recordOf(first)).templateKey();
    const others: [string, boolean][][] = [
      [first[0]!, first[1]!, ["UPDATE orders SET note = 'x', customer = 'eve' WHERE id = 41", false]],
      [first[0]!, first[2]!, first[1]!],
      [...first, ['DELETE FROM orders', false]],
      [first[0]!, ['SELECT * FROM orders WHERE id = 41', false], first[2]!],
      [first[0]!, first[1]!, ["UPDATE orders SET note = 'x' WHERE id > 41", false]],
    ];
    for (const other of others) expect((await recordOf(other)).templateKey()).not.toBe(approved);
  });

  it('starts empty again once cleared', async () => {
    const record = await recordOf(first);
    record.clear();
    expect(record.statements).toEqual([]);
    expect(record.templateKey()).toBe(new TransactionRecord().templateKey());
  });
});

const ticketWith = (tables: { name: string; inserted: number; updated: number; deleted: number }[]): Ticket =>
  ({ impact: { tables: tables.map((t) => ({ schema: 'public', via: 'direct', ...t })) } }) as unknown as Ticket;
const changed = (name: string, inserted: number, updated: number, deleted: number) => ({
  relid: 1,
  schema: 'public',
  name,
  inserted,
  updated,
  deleted,
});

describe('the effect bounds of an approved transaction', () => {
  const ticket = ticketWith([{ name: 'orders', inserted: 1, updated: 1, deleted: 0 }]);

  it('lets the approved effects commit', () => {
    expect(exceededBounds({ changed: [changed('orders', 1, 1, 0)], ddl: [] }, ticket, [], 0)).toEqual([]);
  });

  it('refuses a table the ticket does not name, a count above the approved one, and DDL not in the ticket', () => {
    expect(
      exceededBounds({ changed: [changed('orders', 1, 1, 0), changed('audit', 1, 0, 0)], ddl: [] }, ticket, [], 0),
    ).toEqual(['public.audit: 1 inserted, approved 0']);
    expect(exceededBounds({ changed: [changed('orders', 1, 3, 0)], ddl: [] }, ticket, [], 0)).toEqual([
      'public.orders: 3 updated, approved 1',
    ]);
    expect(exceededBounds({ changed: [], ddl: ['CreateStmt', 'DropStmt'] }, ticket, ['CreateStmt'], 0)).toEqual([
      'DDL not in the ticket: DropStmt',
    ]);
  });
});
