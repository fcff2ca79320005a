/**
 * The safety classifier (SPEC §5.1) against the adversarial corpus, plus the details its callers rely on:
 * error codes and positions, statement slicing, written tables, unbounded and destructive writes.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Node } from 'libpg-query';
import { classifyParsed, classifySql } from '../../../../src/core/sql/classify';
import type { Classification, StatementClassification } from '../../../../src/core/sql/classification';
import { loadParser, parseSql, SqlSyntaxError } from '../../../../src/core/sql/parse';
import { sideEffectOf } from '../../../../src/core/sql/sideEffectFunctions';
import { sqlCorpus, syntaxErrorCases } from '../../../fixtures/sqlCorpus';
import { thrownBy } from '../../../support/agentErrors';

beforeAll(async () => {
  await loadParser();
});

function only(sql: string): StatementClassification {
  const result = classifySql(sql);
  expect(result.statements).toHaveLength(1);
  const [statement] = result.statements;
  if (!statement) throw new Error('no statement');
  return statement;
}

describe('corpus', () => {
  it('holds at least 200 cases, each with its own note', () => {
    expect(sqlCorpus.length).toBeGreaterThanOrEqual(200);
    expect(new Set(sqlCorpus.map((c) => c.note)).size).toBe(sqlCorpus.length);
  });

  it.each(sqlCorpus)('$note', (c) => {
    const result = classifySql(c.sql);
    expect({ class: result.class, decision: result.decision }).toEqual({ class: c.class, decision: c.decision });
    // Anything held or refused must say why; a plain read says nothing.
    if (c.decision === 'run') expect(result.reasons).toEqual([]);
    else expect(result.reasons.length).toBeGreaterThan(0);
  });
});

describe('bad input', () => {
  it.each(syntaxErrorCases)('syntax error in $sql is reported at $position', ({ sql, position }) => {
    const error = thrownBy(() => classifySql(sql));
    expect(error).toBeInstanceOf(SqlSyntaxError);
    expect(error.code).toBe('SQL_SYNTAX');
    expect((error as SqlSyntaxError).position).toBe(position);
  });

  it("keeps PostgreSQL's own message and says where to look", () => {
    const error = thrownBy(() => classifySql('SELECT 1;\nSELEC 2')) as SqlSyntaxError;
    expect(error.message).toBe('syntax error at or near "SELEC"');
    expect(error.problem).toEqual({ message: 'syntax error at or near "SELEC"', position: 10 });
    expect(error.advice).toContain('line 2, column 1');
  });

  it.each(['', '   ', '\n\t ', '-- only a comment', '/* only */ /* comments */', ';;;', ' ; -- x\n ; '])(
    'empty input %j is SQL_EMPTY',
    (sql) => {
      expect(thrownBy(() => classifySql(sql)).code).toBe('SQL_EMPTY');
    },
  );

  it('refuses a NUL byte before parsing: the parser would stop at it and miss what follows', () => {
    const error = thrownBy(() => classifySql('SELECT 1\0; DELETE FROM orders'));
    expect(error.code).toBe('BAD_INPUT');
    expect(error.message).toContain('position 8');
  });

  it('refuses lone surrogates, which make libpg-query parse a truncated copy of the input', () => {
    const hidden = `SELECT 1 -- ${'\uD800\u20AC'.repeat(20)}\nCOMMIT; DELETE FROM orders`;
    expect(thrownBy(() => classifySql(hidden)).code).toBe('BAD_INPUT');
    expect(thrownBy(() => classifySql("SELECT '\uDC00'")).code).toBe('BAD_INPUT');
    expect(classifySql("SELECT '😀'").decision).toBe('run');
  });

  it('names the first placeholder without a value and where it is', () => {
    const error = thrownBy(() => classifySql('SELECT * FROM orders WHERE id = $1'));
    expect(error.code).toBe('SQL_PLACEHOLDERS');
    expect(error.message).toContain('$1');
    expect(error.message).toContain('position 32');
    expect(error.advice).toBe('Put the values in the SQL');
    const several = thrownBy(() => classifySql("SELECT 'é', $2; DELETE FROM orders WHERE id = $1"));
    expect(several.message).toContain('$2 at position 12 (and 1 more)');
  });

  it('accepts placeholders whose values come from elsewhere', () => {
    expect(classifySql('PREPARE q(int) AS SELECT * FROM orders WHERE id = $1').decision).toBe('approve');
    expect(classifySql('CREATE FUNCTION f(int) RETURNS int LANGUAGE sql RETURN $1 + 1').class).toBe('ddl');
    expect(classifySql('EXPLAIN (GENERIC_PLAN) SELECT * FROM orders WHERE id = $1').decision).toBe('run');
    expect(thrownBy(() => classifySql('EXPLAIN SELECT * FROM orders WHERE id = $1')).code).toBe('SQL_PLACEHOLDERS');
  });

  it('reports input nested too deeply for the parser as bad input, and parses deep trees it can take', () => {
    expect(thrownBy(() => classifySql(`SELECT 1${' + 1'.repeat(50_000)}`)).code).toBe('BAD_INPUT');
    expect(classifySql(`SELECT 1${' + 1'.repeat(3_000)}`).decision).toBe('run');
  });
});

describe('statements', () => {
  it('slices each statement from the input, without blanks, leading comments or the semicolon', () => {
    const input = '  SELECT 1 ;\n-- next one\n/* c */ DELETE FROM orders WHERE id = 1;  \n';
    const { statements } = classifySql(input);
    expect(statements.map((s) => [s.sql, s.offset, s.kind])).toEqual([
      ['SELECT 1', 2, 'SelectStmt'],
      ['DELETE FROM orders WHERE id = 1', input.indexOf('DELETE'), 'DeleteStmt'],
    ]);
  });

  it('gives offsets as string indexes even after multi-byte characters', () => {
    const input = "SELECT 'é😀' AS a;\tSELECT 2 -- last, no semicolon";
    const { statements } = classifySql(input);
    expect(statements.map((s) => s.offset)).toEqual([0, input.indexOf('SELECT 2')]);
    for (const s of statements) expect(input.slice(s.offset, s.offset + s.sql.length)).toBe(s.sql);
    expect(statements[1]?.sql).toBe('SELECT 2 -- last, no semicolon');
  });

  it('holds several reads and says why', () => {
    const result = classifySql('SELECT 1; SELECT 2');
    expect(result.statements.map((s) => s.decision)).toEqual(['run', 'run']);
    expect(result.decision).toBe('approve');
    expect(result.reasons).toEqual(['2 statements: each is reviewed on its own']);
  });

  it("lists the input-level reason, then every statement's reasons as they are", () => {
    const result = classifySql('SELECT 1; DELETE FROM orders WHERE id = 1; COMMIT');
    expect(result.reasons).toEqual([
      '3 statements: each is reviewed on its own',
      'deletes rows from orders',
      "COMMIT would end the agent's transaction",
    ]);
    expect(result.statements.map((s) => s.decision)).toEqual(['run', 'approve', 'refuse']);
    expect(result.decision).toBe('refuse');
  });

  it('takes the most dangerous class of all statements', () => {
    expect(classifySql('SELECT 1; SET work_mem = 1; DELETE FROM orders WHERE id = 1').class).toBe('write');
    expect(classifySql('SET work_mem = 1; DROP TABLE orders; SELECT 1').class).toBe('ddl');
    expect(classifySql('DROP TABLE orders; CREATE ROLE r').class).toBe('admin');
    expect(classifySql('CREATE ROLE r; DO $$ BEGIN END $$').class).toBe('unknown');
  });
});

describe('facts', () => {
  it('finds written tables, including those in writable CTEs, and leaves CTE names out of tables', () => {
    const s = only(
      "WITH d AS (DELETE FROM public.orders WHERE id = 1 RETURNING customer_id) UPDATE customers SET name = 'x' FROM d WHERE customers.id = d.customer_id",
    );
    expect([...s.writesTo].sort()).toEqual(['customers', 'public.orders']);
    expect([...s.tables].sort()).toEqual(['customers', 'public.orders']);
    expect(s.nodeKinds).toContain('DeleteStmt');
    expect(s.nodeKinds).toEqual([...new Set(s.nodeKinds)].sort());
    expect(s.reasons).toContain('writable CTE: DELETE inside WITH');
    expect(s.reasons).toContain('deletes rows from public.orders');
    expect(s.unboundedWrite).toBe(false);
  });

  it('lists every table read, as written', () => {
    const s = only(
      'SELECT * FROM customers c JOIN sales.orders o ON o.customer_id = c.id WHERE EXISTS (SELECT 1 FROM order_items)',
    );
    expect(s.tables).toEqual(['customers', 'sales.orders', 'order_items']);
    expect(s.writesTo).toEqual([]);
    expect(only('WITH orders AS (SELECT 1) SELECT * FROM orders').tables).toEqual([]);
  });

  it('flags UPDATE and DELETE without a real WHERE clause, wherever they are', () => {
    expect(only('DELETE FROM orders').unboundedWrite).toBe(true);
    expect(only('UPDATE orders SET total = 0 WHERE 1 = 1').unboundedWrite).toBe(true);
    expect(only('DELETE FROM orders WHERE true').unboundedWrite).toBe(true);
    expect(only('WITH d AS (UPDATE orders SET total = 0 RETURNING 1) SELECT 1').unboundedWrite).toBe(true);
    expect(only('EXPLAIN ANALYZE DELETE FROM orders').unboundedWrite).toBe(true);
    expect(only('DELETE FROM orders WHERE 1 = 2').unboundedWrite).toBe(false);
    expect(only('UPDATE orders SET total = 0 WHERE id = 1').unboundedWrite).toBe(false);
    expect(only('INSERT INTO orders DEFAULT VALUES').unboundedWrite).toBe(false);
  });

  it('does not count a write that EXPLAIN or PREPARE only plans as written', () => {
    const explained = only('EXPLAIN DELETE FROM orders');
    expect([explained.class, explained.decision, explained.writesTo, explained.unboundedWrite]).toEqual([
      'write',
      'approve',
      [],
      false,
    ]);
    expect(explained.reasons).toEqual(['EXPLAIN of a statement that deletes rows from orders']);
    expect(only('PREPARE d AS DELETE FROM orders').writesTo).toEqual([]);
  });

  it('marks DROP, TRUNCATE and destructive ALTERs', () => {
    for (const sql of [
      'DROP TABLE orders',
      'DROP VIEW order_totals',
      'TRUNCATE orders',
      'ALTER TABLE orders DROP COLUMN status',
      'ALTER TABLE orders ALTER COLUMN total TYPE bigint',
      'ALTER TABLE orders DROP CONSTRAINT orders_pkey',
      'ALTER TABLE orders ALTER COLUMN status DROP NOT NULL',
      'DROP ROLE bob',
      'DROP OWNED BY bob',
      'ALTER DOMAIN d DROP CONSTRAINT c',
    ]) {
      expect(only(sql).destructive, sql).toBe(true);
    }
    for (const sql of [
      'ALTER TABLE orders ADD COLUMN note text',
      'DELETE FROM orders',
      'CREATE TABLE t (id int)',
      'ALTER TABLE orders RENAME TO o2',
    ]) {
      expect(only(sql).destructive, sql).toBe(false);
    }
  });

  it('names TRUNCATE and COPY FROM targets as written tables', () => {
    expect(only('TRUNCATE orders, public.order_items').writesTo).toEqual(['orders', 'public.order_items']);
    expect(only('COPY orders FROM STDIN').writesTo).toEqual(['orders']);
    expect(only('COPY orders TO STDOUT').writesTo).toEqual([]);
  });

  it('says why in one sentence per fact', () => {
    expect(only("SELECT nextval('order_seq')").reasons).toEqual(['calls nextval(), which changes a sequence']);
    expect(only('SELECT * FROM orders FOR UPDATE').reasons).toEqual(['locks rows (FOR UPDATE)']);
    expect(only('SELECT pg_advisory_lock(1)').reasons).toEqual([
      'calls pg_advisory_lock(), which takes an advisory lock',
    ]);
    expect(only('COMMIT').reasons).toEqual(["COMMIT would end the agent's transaction"]);
    expect(only('END').reasons).toEqual(["END would end the agent's transaction"]);
    expect(only("COPY orders TO PROGRAM 'gzip'").reasons[0]).toMatch(
      /^COPY … PROGRAM runs a shell command on the server/,
    );
    expect(only('EXPLAIN (ANALYZE) DELETE FROM orders WHERE id = 1').reasons[0]).toBe(
      'EXPLAIN ANALYZE executes the statement',
    );
    expect(only('EXPLAIN ANALYZE SELECT 1').reasons).toEqual(['EXPLAIN ANALYZE executes the query']);
  });
});

describe('unknown trees are never reads', () => {
  function withTree(sql: string, change: (tree: Record<string, unknown>) => Node): Classification {
    const parsed = parseSql(sql);
    const [first] = parsed.statements;
    if (!first) throw new Error('no statement');
    const tree = JSON.parse(JSON.stringify(first.tree)) as Record<string, unknown>;
    return classifyParsed({ ...parsed, statements: [{ ...first, tree: change(tree) }] });
  }

  it('holds a read holding a node type the classifier does not know', () => {
    const result = withTree('SELECT 1', () => {
      const fancy = { FancyNewExpr: { arg: { A_Const: { ival: { ival: 1 } } } } };
      return { SelectStmt: { targetList: [{ ResTarget: { val: fancy } }] } } as unknown as Node;
    });
    expect(result.statements[0]?.nodeKinds).toContain('FancyNewExpr');
    expect([result.class, result.decision]).toEqual(['unknown', 'approve']);
  });

  it('holds a statement type the classifier does not know', () => {
    const result = withTree('SELECT 1', () => ({ FutureStmt: { relation: { relname: 'orders' } } }) as unknown as Node);
    expect([result.class, result.decision]).toEqual(['unknown', 'approve']);
    expect(result.statements[0]?.tables).toEqual(['orders']);
  });

  it('holds a SELECT with a clause the classifier does not know', () => {
    const result = withTree('SELECT 1', (tree) => {
      const select = tree.SelectStmt as Record<string, unknown>;
      return { SelectStmt: { ...select, futureClause: { flag: true } } } as unknown as Node;
    });
    expect([result.class, result.decision]).toEqual(['unknown', 'approve']);
  });

  it('holds a read holding a node that belongs to another kind of statement', () => {
    const result = withTree('SELECT 1', () => ({
      SelectStmt: { targetList: [{ ResTarget: { val: { CurrentOfExpr: {} } } }] },
    }));
    expect([result.class, result.decision]).toEqual(['unknown', 'approve']);
    expect(result.reasons[0]).toContain('CurrentOfExpr');
  });
});

describe('side-effect functions', () => {
  it.each([
    [['PG_CATALOG', 'SETVAL'], 'write'],
    [['pg_try_advisory_xact_lock_shared'], 'session'],
    [['pg_advisory_unlock'], 'session'],
    [['public', 'dblink_exec'], 'unknown'],
    [['cron', 'schedule'], 'admin'],
    [['pg_stat_reset_shared'], 'admin'],
    [['pg_ls_logdir'], 'admin'],
    [['lo_truncate64'], 'write'],
    [['Query_To_Xml'], 'unknown'],
  ])('%j is %s', (name, cls) => {
    expect(sideEffectOf(name)?.class).toBe(cls);
  });

  it.each([[['count']], [['schedule']], [['pg_sleep']], [['currval']], [['now']], [['']], [[]]])(
    '%j has none',
    (name) => {
      expect(sideEffectOf(name)).toBeUndefined();
    },
  );
});

describe('loading', () => {
  it('is idempotent and free once loaded', async () => {
    await Promise.all([loadParser(), loadParser()]);
    await expect(loadParser()).resolves.toBeUndefined();
  });

  it('tells the caller to load the parser first', async () => {
    vi.resetModules();
    const fresh = await import('../../../../src/core/sql/classify');
    expect(() => fresh.classifySql('SELECT 1')).toThrow(/loadParser/);
  });
});
