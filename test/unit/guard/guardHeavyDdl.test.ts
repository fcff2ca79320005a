/**
 * Which approved ticket lets heavy DDL run in a guarded retry (src/guard/transaction/heavyDdl.ts): only one
 * whose statements start with the retry's so far and then this heavy statement with its identical text, whose
 * effects cover the retry's so far, approved, unaltered, and not spent past its runs.
 */
import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../../src/core/approvals/ticket';
import { ticketHash, transactionSql } from '../../../src/core/approvals/ticket';
import { loadParser } from '../../../src/core/sql/parse';
import { approvedPrefix, MAX_HEAVY_RUNS, spendHeavyRun } from '../../../src/guard/transaction/heavyDdl';
import type { RecordedStatement } from '../../../src/guard/transaction/transactionRecord';
import { isHeavyTemplate, recordStatement } from '../../../src/guard/transaction/transactionRecord';

const CONNECTION = 'postgres://db';
const INSERT = "INSERT INTO accounts (name) VALUES ('eve')";
const INDEX = 'CREATE INDEX big_id ON big (id)';

function ticket(
  id: string,
  statements: RecordedStatement[],
  changes: Partial<Ticket> = {},
  effects = [{ schema: 'public', name: 'accounts', inserted: 1, updated: 0, deleted: 0 }],
): Ticket {
  const base = {
    sql: transactionSql(statements),
    origin: 'guardTransaction' as const,
    transaction: { statements, effects },
  };
  const sqlHash = ticketHash(base);
  return {
    id,
    kind: 'write',
    status: 'APPROVED',
    connection: CONNECTION,
    sqlHash,
    decisions: [{ hash: sqlHash }],
    impact: { tables: [] },
    ...base,
    ...changes,
  } as unknown as Ticket;
}

describe('the approved prefix of heavy DDL', () => {
  it('matches templates so far, the heavy template and identical text, effects within; nothing else', async () => {
    await loadParser();
    const insert = await recordStatement(INSERT, false);
    const heavy = await recordStatement(INDEX, false, INDEX, true);
    expect(isHeavyTemplate(heavy.template)).toBe(true);
    const measured = {
      changed: [{ relid: 1, schema: 'public', name: 'accounts', inserted: 1, updated: 0, deleted: 0 }],
      ddl: [INDEX],
    };
    const find = (t: Ticket, next = heavy, m = measured) => approvedPrefix([t], CONNECTION, [insert], next, m, 0)?.id;

    expect(find(ticket('t1', [insert, heavy]))).toBe('t1');
    // A longer approved ticket covers the prefix too.
    expect(find(ticket('t2', [insert, heavy, await recordStatement('DELETE FROM accounts WHERE id = 1', false)]))).toBe(
      't2',
    );
    // Not approved, another connection, altered after approval.
    expect(find(ticket('t3', [insert, heavy], { status: 'PENDING_APPROVAL' }))).toBeUndefined();
    expect(find(ticket('t4', [insert, heavy], { connection: 'postgres://other' }))).toBeUndefined();
    expect(
      find(ticket('t5', [insert, heavy], { sql: `${INSERT};\nCREATE INDEX big_id ON big (id, id);` })),
    ).toBeUndefined();
    // The same statement measured as cheap when approved (a "w:" template) is not an approval to run it heavy.
    expect(find(ticket('t6', [insert, await recordStatement(INDEX, false)]))).toBeUndefined();
    // Same template (the fingerprint ignores constants), other text: not the approved statement.
    const narrow = 'ALTER TABLE big ALTER COLUMN id TYPE varchar(10)';
    const wide = 'ALTER TABLE big ALTER COLUMN id TYPE varchar(1000)';
    const [approvedAlter, sentAlter] = [
      await recordStatement(narrow, false, narrow, true),
      await recordStatement(wide, false, wide, true),
    ];
    expect(sentAlter.template).toBe(approvedAlter.template);
    expect(find(ticket('t7', [insert, approvedAlter]), sentAlter, { ...measured, ddl: [wide] })).toBeUndefined();
    expect(find(ticket('t7b', [insert, approvedAlter]), approvedAlter, { ...measured, ddl: [narrow] })).toBe('t7b');
    // Another statement before it, or more rows so far than the ticket measured.
    expect(
      approvedPrefix([ticket('t8', [insert, heavy])], CONNECTION, [], heavy, { changed: [], ddl: [INDEX] }, 0),
    ).toBeUndefined();
    expect(
      find(ticket('t9', [insert, heavy]), heavy, {
        ...measured,
        changed: [{ relid: 1, schema: 'public', name: 'accounts', inserted: 5, updated: 0, deleted: 0 }],
      }),
    ).toBeUndefined();
  });

  it('lets one ticket run its heavy statement at most MAX_HEAVY_RUNS times', async () => {
    await loadParser();
    const heavy = await recordStatement(INDEX, false, INDEX, true);
    const t = ticket('spent', [heavy], {}, []);
    const find = () => approvedPrefix([t], CONNECTION, [], heavy, { changed: [], ddl: [INDEX] }, 0)?.id;
    for (let i = 0; i < MAX_HEAVY_RUNS; i++) {
      expect(find()).toBe('spent');
      spendHeavyRun('spent', 0);
    }
    expect(find()).toBeUndefined();
  });
});
