// Index advice reads columns from PostgreSQL's own parse tree (issue 26): which table each predicate, join,
// sort and grouping uses, through aliases, CTEs and subqueries; OR arms and expressions are left alone.
import { beforeAll, describe, expect, it } from 'vitest';
import { columnUsage } from '../../../../src/core/dba/indexAdvice/columnUsage';
import { loadParser, parseSql } from '../../../../src/core/sql/parse';

const usage = (sql: string) => {
  const [statement] = parseSql(sql).statements;
  if (!statement) throw new Error('no statement');
  return columnUsage(statement.tree);
};

describe('columnUsage', () => {
  beforeAll(() => loadParser());

  it('reads equality, range, LIKE, IN, joins, sorts and groups with their qualifiers', () => {
    const [u] = usage(
      "SELECT o.id, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid' AND o.created_at > $1 AND total BETWEEN 1 AND 5 AND c.email LIKE 'a%' AND o.kind IN (1, 2) GROUP BY o.id, c.email ORDER BY o.created_at DESC",
    );
    expect(u?.tables).toEqual([
      { name: '"orders"', alias: 'o' },
      { name: '"customers"', alias: 'c' },
    ]);
    expect(u?.uses).toEqual([
      { qualifier: 'c', column: 'id', role: 'join' },
      { qualifier: 'o', column: 'customer_id', role: 'join' },
      { qualifier: 'o', column: 'status', role: 'eq' },
      { qualifier: 'o', column: 'created_at', role: 'range' },
      { qualifier: undefined, column: 'total', role: 'range' },
      { qualifier: 'c', column: 'email', role: 'range' },
      { qualifier: 'o', column: 'kind', role: 'eq' },
      { qualifier: 'o', column: 'created_at', role: 'order' },
      { qualifier: 'o', column: 'id', role: 'group' },
      { qualifier: 'c', column: 'email', role: 'group' },
    ]);
    expect(u?.selected).toEqual({
      star: false,
      columns: [
        { qualifier: 'o', column: 'id' },
        { qualifier: 'c', column: 'email' },
      ],
    });
  });

  it('leaves OR arms, NOT and expressions on columns to the planner', () => {
    const [u] = usage('SELECT * FROM t WHERE (a = 1 OR b = 2) AND NOT c = 3 AND lower(d) = $1');
    expect(u?.uses).toEqual([]);
    expect(u?.selected.star).toBe(true);
  });

  it('reads CTEs and subqueries in FROM as queries of their own, schema-qualified names quoted', () => {
    const found = usage(
      'WITH recent AS (SELECT id FROM sales."Orders" WHERE day > $1) SELECT * FROM recent r JOIN (SELECT x FROM u WHERE y = 2) s ON s.x = r.id',
    );
    expect(found.map((u) => u.tables)).toEqual([
      [{ name: '"sales"."Orders"', alias: 'Orders' }],
      [{ name: '"u"', alias: 'u' }],
      [{ name: '"recent"', alias: 'r' }],
    ]);
    expect(found[0]?.uses).toEqual([{ qualifier: undefined, column: 'day', role: 'range' }]);
    expect(found[1]?.uses).toEqual([{ qualifier: undefined, column: 'y', role: 'eq' }]);
  });

  it('gives nothing for what is not a SELECT', () => {
    expect(usage('DELETE FROM t WHERE a = 1')).toEqual([]);
  });
});
