/**
 * What a guard transaction's approval binds, without a database: each statement's constants and where they stand
 * (statementValues.ts), what may vary on retry (varyingValues.ts) and the retry's comparison (valueComparison.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { GuardTransactionStatement } from '../../../src/core/approvals/ticket';
import { loadParser } from '../../../src/core/sql/parse';
import { statementValues } from '../../../src/guard/transaction/statementValues';
import { compareValues } from '../../../src/guard/transaction/valueComparison';
import { isCurrentTimestamp, markVarying, TIMESTAMP_WINDOW_MS } from '../../../src/guard/transaction/varyingValues';

const UUID_A = '3f1c2b7e-9d4a-4c1e-8b2f-0a1b2c3d4e5f';
const UUID_B = '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d';
const NOW = Date.parse('2026-11-29T05:00:00Z');
const rule = { volatile: true, now: NOW };
const noKeys = () => Promise.resolve(new Set<string>());

async function ticketOf(sqls: string[], returned = new Map()): Promise<GuardTransactionStatement[]> {
  const varies = await markVarying(
    sqls.map((s) => statementValues(s)),
    returned,
    rule,
    noKeys,
  );
  return sqls.map((sql, i) => ({
    sql,
    template: '',
    read: false,
    ...(varies[i]!.length ? { varies: varies[i] } : {}),
  }));
}
const retryOf = (sqls: string[]) => sqls.map((sql) => ({ sql, values: () => statementValues(sql) }));

describe('guard transaction values', () => {
  beforeAll(() => loadParser());

  it('reads each constant in text order, knowing which choose rows and which an UPDATE sets', () => {
    const values = statementValues("UPDATE t SET v = 5, name = 'x' WHERE id = 6 AND k IN (7, 8)");
    expect(values.normalized).toBe('UPDATE t SET v = $1, name = $2 WHERE id = $3 AND k IN ($4, $5)');
    expect(values.sites.map((s) => [s.value, s.choosesRows, s.setColumn?.column])).toEqual([
      ['5', false, 'v'],
      ['x', false, 'name'],
      ['6', true, undefined],
      ['7', true, undefined],
      ['8', true, undefined],
    ]);
    expect(
      statementValues("INSERT INTO t VALUES (1, 'a') ON CONFLICT (id) DO NOTHING").sites.every((s) => s.choosesRows),
    ).toBe(true);
  });

  it('holds another value anywhere it was not marked as varying', async () => {
    const approved = await ticketOf(['DELETE FROM t WHERE id = 6']);
    expect(compareValues(approved, retryOf(['DELETE FROM t WHERE id = 6']), new Map(), rule)).toEqual([]);
    expect(compareValues(approved, retryOf(['DELETE FROM t WHERE id = 7']), new Map(), rule)).toEqual([
      { statement: 0, at: 0, approved: '6', now: '7', why: 'must be identical' },
    ]);
    // Same fingerprint, other text besides constants (an alias): another statement.
    const aliased = compareValues(approved, retryOf(['DELETE FROM t AS x WHERE id = 6']), new Map(), rule);
    expect(aliased[0]?.why).toBe('another statement');
  });

  it('lets a fresh UUID and the current time vary, never in a WHERE or when turned off', async () => {
    const insert = (uuid: string, at: string) => `INSERT INTO d (id, at) VALUES ('${uuid}', '${at}')`;
    const approved = await ticketOf([insert(UUID_A, '2026-11-29T04:58:00Z')]);
    expect(approved[0]!.varies?.map((v) => v.kind)).toEqual(['uuid', 'timestamp']);
    expect(compareValues(approved, retryOf([insert(UUID_B, '2026-11-29T05:03:00Z')]), new Map(), rule)).toEqual([]);
    expect(
      compareValues(approved, retryOf([insert('not-a-uuid', '2026-11-29T05:03:00Z')]), new Map(), rule),
    ).toHaveLength(1);
    expect(compareValues(approved, retryOf([insert(UUID_B, '2026-11-29T04:00:00Z')]), new Map(), rule)).toHaveLength(1);
    expect(
      compareValues(approved, retryOf([insert(UUID_B, '2026-11-29T05:03:00Z')]), new Map(), {
        ...rule,
        volatile: false,
      }),
    ).toHaveLength(2);
    const where = await ticketOf([`DELETE FROM d WHERE id = '${UUID_A}'`]);
    expect(where[0]!.varies).toBeUndefined();
  });

  it('follows a returned id to where it is passed on, in the retry as returned there', async () => {
    const returned = (id: string) => new Map([[0, { columns: ['id'], rows: [[id]] }]]);
    const sqls = (id: string) => ["INSERT INTO p (n) VALUES ('a') RETURNING id", `INSERT INTO c (p) VALUES (${id})`];
    const approved = await ticketOf(sqls('41'), returned('41'));
    expect(approved[1]!.varies).toEqual([{ at: 0, kind: 'returned', value: '41', from: 0, row: 0, column: 'id' }]);
    expect(compareValues(approved, retryOf(sqls('42')), returned('42'), rule)).toEqual([]);
    expect(compareValues(approved, retryOf(sqls('41')), returned('42'), rule)[0]?.why).toContain(
      'must be what statement 1 returned in this run (42)',
    );
  });

  it('reads a timestamp with or without a zone within the window', () => {
    expect(isCurrentTimestamp('2026-11-29 05:09:00+00', NOW)).toBe(true);
    expect(isCurrentTimestamp(new Date(NOW + TIMESTAMP_WINDOW_MS + 1000).toISOString(), NOW)).toBe(false);
    expect(isCurrentTimestamp('2026-11-29T05:00:00Z', NOW, '2026-11-29 05:00:00')).toBe(false);
  });
});
