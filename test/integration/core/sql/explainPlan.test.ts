// Explain (issue 15): the plan of a read from real PostgreSQL as a tree (EXPLAIN (FORMAT JSON), READ ONLY,
// never ANALYZE), the dominating node marked; anything but one plain read is refused before PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { AgentError } from '../../../../src/core/platform/errors';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { PlanNode } from '../../../../src/core/sql/explainPlan';
import { explainRead } from '../../../../src/core/sql/explainPlan';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { queryValue } from '../../../support/scratchDatabase';
import { SHOP_FINGERPRINT, SHOP_SCHEMA } from '../../../support/shopSchema';

const LIMITS = { statementTimeoutMs: 5_000, lockTimeoutMs: 1_000 };
const flat = (node: PlanNode): PlanNode[] => [node, ...node.children.flatMap(flat)];

describe.runIf(postgresAvailable)('Explain of a read', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, `${SHOP_SCHEMA}\nANALYZE;`);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('gives the plan as a tree with costs, rows and the node that dominates', async () => {
    const plan = await explainRead(
      db,
      "SELECT c.email, sum(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid' GROUP BY c.email ORDER BY 2 DESC",
      LIMITS,
    );
    const nodes = flat(plan);
    expect(nodes.length).toBeGreaterThanOrEqual(3);
    expect(nodes.map((n) => n.label).join(' | ')).toMatch(/Scan on orders o\b/);
    expect(nodes.filter((n) => n.dominant)).toHaveLength(1);
    const dominant = nodes.find((n) => n.dominant);
    expect(dominant?.selfCost).toBe(Math.max(...nodes.map((n) => n.selfCost)));
    // Without a Limit, own costs add up to the plan's total cost; shares always add up to the whole.
    expect(nodes.reduce((sum, n) => sum + n.selfCost, 0)).toBeCloseTo(plan.totalCost, 1);
    expect(nodes.reduce((sum, n) => sum + n.share, 0)).toBeCloseTo(1, 3);
    // A Limit costs less than its input: the scan under it is still where the work is.
    const limited = flat(await explainRead(db, 'SELECT * FROM customers LIMIT 5', LIMITS));
    expect(limited.map((n) => [n.label, n.dominant, Math.round(n.share * 100)])).toEqual([
      ['Limit', false, 0],
      ['Seq Scan on customers', true, 100],
    ]);
    expect(nodes.some((n) => n.detail.includes("'paid'"))).toBe(true);
  });

  it('refuses a write, a read with side effects and two statements, without running anything', async () => {
    const fingerprint = await queryValue(scratch.url, SHOP_FINGERPRINT);
    for (const [sql, code, message] of [
      ['DELETE FROM orders', 'SQL_REFUSED', /plan of a read only; this is a write statement \(DeleteStmt\)/],
      ["SELECT nextval('orders_id_seq')", 'SQL_REFUSED', /plan of a read only; this is a/],
      ['SELECT 1; SELECT 2', 'BAD_INPUT', /one statement; this text has 2/],
      ['EXPLAIN ANALYZE DELETE FROM orders', 'SQL_REFUSED', /plan of a read only/],
    ] as const) {
      const error = await explainRead(db, sql, LIMITS).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, sql).toBeInstanceOf(AgentError);
      expect((error as AgentError).code, sql).toBe(code);
      expect((error as AgentError).message, sql).toMatch(message);
    }
    expect(await queryValue(scratch.url, SHOP_FINGERPRINT)).toBe(fingerprint);
  });
});
