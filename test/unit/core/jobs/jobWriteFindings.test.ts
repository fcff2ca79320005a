// The two job rules of issue 25 on the real parser: a write planned after a read cut at the row cap, and a
// write whose WHERE filters on a column an earlier executed UPDATE of the job SET; both lift the risk one level.
import { beforeAll, describe, expect, it } from 'vitest';
import { columnsSetBy, jobWriteFindings } from '../../../../src/core/jobs/phases/jobWriteFindings';
import { loadParser } from '../../../../src/core/sql/parse';
import {
  COLUMN_JUST_SET_RULE,
  TRUNCATED_READ_RULE,
  liftForSweepingWrites,
} from '../../../../src/core/sql/sweepingWrites';

beforeAll(async () => {
  await loadParser();
});

describe('columnsSetBy', () => {
  it('names the columns each UPDATE sets, with its table and step', () => {
    expect(
      columnsSetBy(
        'UPDATE public.orders SET status = $$done$$, note = note || $$x$$ WHERE id < 10; UPDATE items SET qty = 0 WHERE qty < 0',
        'sql/003-close.sql',
      ),
    ).toEqual([
      { table: 'public.orders', column: 'status', step: 'sql/003-close.sql' },
      { table: 'public.orders', column: 'note', step: 'sql/003-close.sql' },
      { table: 'items', column: 'qty', step: 'sql/003-close.sql' },
    ]);
  });

  it('gives nothing for other statements and for SQL that does not parse', () => {
    expect(columnsSetBy('DELETE FROM orders WHERE status = 1', 's')).toEqual([]);
    expect(columnsSetBy('INSERT INTO orders (status) VALUES (1)', 's')).toEqual([]);
    expect(columnsSetBy('UPDATE orders SET', 's')).toEqual([]);
  });
});

describe('jobWriteFindings', () => {
  const set = [{ table: 'public.orders', column: 'status', step: 'sql/002-close.sql' }];

  it('flags a DELETE whose WHERE uses a column an earlier step set, naming the column and the step', () => {
    const findings = jobWriteFindings("DELETE FROM orders o WHERE o.status = 'done' AND id > 3", [], set);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ rule: COLUMN_JUST_SET_RULE, severity: 'warning' });
    expect(findings[0]?.message).toContain('orders.status');
    expect(findings[0]?.message).toContain('sql/002-close.sql');
  });

  it('finds the column inside a subquery of the WHERE, and not in another table or schema', () => {
    expect(
      jobWriteFindings('UPDATE orders SET note = 1 WHERE id IN (SELECT id FROM orders WHERE status = 2)', [], set),
    ).toHaveLength(1);
    expect(jobWriteFindings('DELETE FROM items WHERE status = 1', [], set)).toEqual([]);
    expect(jobWriteFindings('DELETE FROM archive.orders WHERE status = 1', [], set)).toEqual([]);
    expect(jobWriteFindings('DELETE FROM orders WHERE id = 1', [], set)).toEqual([]);
    expect(jobWriteFindings('UPDATE orders SET status = 3 WHERE id = 1', [], set)).toEqual([]);
  });

  it('flags a write to a table a truncated read read, with the rows it showed; not a write to another table', () => {
    const reads = [{ rows: 200, tables: ['orders'] }];
    const findings = jobWriteFindings('UPDATE public.orders SET note = 1 WHERE id < 500', reads, []);
    expect(findings.map((f) => f.rule)).toEqual([TRUNCATED_READ_RULE]);
    expect(findings[0]?.message).toContain('returned only the first 200 rows');
    expect(jobWriteFindings('DELETE FROM items WHERE id = 1', reads, [])).toEqual([]);
    // A cut read whose tables are not known flags every write.
    expect(jobWriteFindings('DELETE FROM items WHERE id = 1', [{ rows: 50, tables: [] }], [])).toHaveLength(1);
  });

  it('leaves reads, DDL and unparsable SQL alone', () => {
    const reads = [{ rows: 200, tables: [] }];
    expect(jobWriteFindings('SELECT * FROM orders WHERE status = 1', reads, set)).toEqual([]);
    expect(jobWriteFindings('DROP TABLE orders', reads, set)).toEqual([]);
    expect(jobWriteFindings('DELETE FROM', reads, set)).toEqual([]);
  });

  it('lifts the risk one level, once, whatever the number of findings', () => {
    const findings = jobWriteFindings(
      "DELETE FROM orders WHERE status = 'done'",
      [{ rows: 200, tables: ['public.orders'] }],
      set,
    );
    expect(findings).toHaveLength(2);
    const lifted = liftForSweepingWrites('LOW', findings);
    expect(lifted.risk).toBe('MEDIUM');
    expect(lifted.reason).toContain('one level up');
    expect(liftForSweepingWrites('CRITICAL', findings).risk).toBe('CRITICAL');
    expect(liftForSweepingWrites('LOW', []).risk).toBe('LOW');
  });
});
