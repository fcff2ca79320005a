import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

interface ContextJson {
  tables: { schema: string; name: string; score: number; columns: string[] }[];
  tokens: number;
  budget: number;
  schemaTokens: number;
}

describe.runIf(postgresAvailable)('pg-agent context on a PostgreSQL server', () => {
  let scratch: ScratchDatabase;
  const cwd = mkdtempSync(join(tmpdir(), 'pgagent-cli-context-'));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      `CREATE TABLE customers (id bigint PRIMARY KEY, full_name text NOT NULL, email text);
       CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers, total numeric(10,2), created_at timestamptz DEFAULT now(), state text);
       CREATE TABLE products (id bigint PRIMARY KEY, sku text UNIQUE, title text, price numeric(10,2));
       CREATE TABLE order_items (order_id bigint REFERENCES orders, product_id bigint REFERENCES products, quantity int, PRIMARY KEY (order_id, product_id));
       CREATE TABLE warehouse_levels (product_id bigint PRIMARY KEY REFERENCES products, on_hand int);
       CREATE TABLE app_settings (key text PRIMARY KEY, value text);
       COMMENT ON TABLE customers IS 'People who buy from the shop';
       COMMENT ON TABLE warehouse_levels IS 'Units of each product in stock';
       COMMENT ON COLUMN orders.total IS 'Order total incl. tax';
       INSERT INTO customers VALUES (1, 'Ada', NULL);
       INSERT INTO orders (id, customer_id, total, state) SELECT g, 1, g, CASE WHEN g % 3 = 0 THEN 'cancelled' ELSE 'shipped' END FROM generate_series(1, 300) g;
       ANALYZE;`,
    );
  });

  afterAll(async () => {
    await scratch?.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('prints the SPEC §6 JSON: ranked tables with their columns, tokens within the budget', async () => {
    const run = await runPgAgent(
      ['context', '--db', scratch.url, '--json', '--', 'how much did each customer spend last month'],
      { cwd },
    );
    expect(run.code).toBe(0);
    const context = JSON.parse(run.stdout) as ContextJson;
    expect(Object.keys(context).sort()).toEqual(['budget', 'schemaTokens', 'tables', 'tokens']);
    for (const t of context.tables) expect(Object.keys(t).sort()).toEqual(['columns', 'name', 'schema', 'score']);
    expect(
      context.tables
        .slice(0, 2)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['customers', 'orders']);
    expect(context.tables[0]?.schema).toBe('public');
    expect(context.tables.find((t) => t.name === 'orders')?.columns).toEqual([
      'id',
      'customer_id',
      'total',
      'created_at',
      'state',
    ]);
    // The whole small schema fits the default budget, so every table is given, the relevant ones first.
    expect(context.tables).toHaveLength(6);
    expect(context.budget).toBe(6000);
    expect(context.tokens).toBeLessThanOrEqual(context.budget);
    expect(context.tokens).toBe(context.schemaTokens);
    const scores = context.tables.map((t) => t.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const s of scores) expect(Math.round(s * 1000) / 1000).toBe(s);
  });

  it('finds a table by its comment, and shrinks to a small budget', async () => {
    const full = JSON.parse(
      (await runPgAgent(['context', '--db', scratch.url, '--json', '--', 'products out of stock'], { cwd })).stdout,
    ) as ContextJson;
    const ranking = full.tables.map((t) => t.name);
    expect(ranking[0]).toBe('products');
    expect(ranking.indexOf('warehouse_levels')).toBeLessThan(ranking.indexOf('customers'));
    const byComment = JSON.parse(
      (await runPgAgent(['context', '--db', scratch.url, '--json', '--', 'what is in stock'], { cwd })).stdout,
    ) as ContextJson;
    expect(byComment.tables[0]?.name).toBe('warehouse_levels');
    const run = await runPgAgent(
      ['context', '--db', scratch.url, '--json', '--budget', '50', '--', 'products out of stock'],
      { cwd },
    );
    expect(run.code).toBe(0);
    const small = JSON.parse(run.stdout) as ContextJson;
    expect(small.budget).toBe(50);
    expect(small.tokens).toBeLessThanOrEqual(50);
    expect(small.tables.length).toBeGreaterThan(0);
    expect(small.tables.length).toBeLessThan(full.tables.length);
    expect(small.tables[0]?.name).toBe(full.tables[0]?.name);
    expect(small.schemaTokens).toBe(full.schemaTokens);
  });

  it('prints a ranked list, the token line and, on request, the text for a person', async () => {
    const run = await runPgAgent(['context', '--db', scratch.url, '--show-text', '-'], {
      cwd,
      stdin: 'orders per customer\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^1\. {2}public\.(orders|customers) /);
    expect(run.stdout).toMatch(/\d+ of 6,000 tokens \(the whole schema: \d+\)/);
    expect(run.stdout).toContain('customer_id bigint → customers.id');
  });

  it('links a word that is only a value (from pg_stats, never shown) to its table, with or without --samples', async () => {
    const question = ['--json', '--', 'cancelled'];
    const plain = JSON.parse(
      (await runPgAgent(['context', '--db', scratch.url, ...question], { cwd })).stdout,
    ) as ContextJson;
    const sampled = JSON.parse(
      (await runPgAgent(['context', '--db', scratch.url, '--samples', ...question], { cwd })).stdout,
    ) as ContextJson;
    for (const context of [plain, sampled]) {
      expect(context.tables[0]?.name).toBe('orders');
      expect(context.tables[0]?.score).toBeGreaterThan(1); // more than the size prior alone
    }
    const text = await runPgAgent(['context', '--db', scratch.url, '--show-text', '--', 'cancelled'], { cwd });
    expect(text.stdout).not.toContain('cancelled');
  });

  it('exits 2 on an empty question or a bad budget', async () => {
    const empty = await runPgAgent(['context', '--db', scratch.url, '--', '   '], { cwd });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('The question is empty.');
    const badBudget = await runPgAgent(['context', '--db', scratch.url, '--budget', 'lots', '--', 'orders'], { cwd });
    expect(badBudget.code).toBe(2);
  });
});

describe.runIf(postgresAvailable)('pg-agent context on a schema per tenant', () => {
  let scratch: ScratchDatabase;
  const cwd = mkdtempSync(join(tmpdir(), 'pgagent-cli-tenants-'));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const tenant = (n: number) => `CREATE SCHEMA tenant_${n};
       CREATE TABLE tenant_${n}.t_1 (id bigint PRIMARY KEY, status text, amount numeric(12,2), note text);
       CREATE TABLE tenant_${n}.t_2 (id bigint PRIMARY KEY, t_1_id bigint REFERENCES tenant_${n}.t_1, status text, amount numeric(12,2));
       CREATE TABLE tenant_${n}.t_3 (id bigint PRIMARY KEY, t_2_id bigint REFERENCES tenant_${n}.t_2, status text, amount numeric(12,2), code text);`;
    await execSql(scratch.url, [1, 2, 3].map(tenant).join('\n'));
  });

  afterAll(async () => {
    await scratch?.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('shows each table once with the schemas that share it, in the schema the question names', async () => {
    const question = 'total amount per status for tenant 2 in table t_3';
    const run = await runPgAgent(['context', '--db', scratch.url, '--json', '--', question], { cwd });
    expect(run.code).toBe(0);
    const context = JSON.parse(run.stdout) as ContextJson & { tables: { schemas?: string[] }[] };
    expect(Object.keys(context).sort()).toEqual(['budget', 'schemaTokens', 'tables', 'tokens']);
    expect(context.tables).toHaveLength(3);
    expect(context.tables[0]).toEqual(
      expect.objectContaining({ schema: 'tenant_2', name: 't_3', schemas: ['tenant_2', 'tenant_1', 'tenant_3'] }),
    );
    const text = await runPgAgent(['context', '--db', scratch.url, '--show-text', '--', question], { cwd });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('tenant_2.t_3 (same in 3 schemas)');
    expect(text.stdout).toContain('t_2_id bigint → tenant_2.t_2.id');
    expect(text.stdout).toContain('-- the same table in 3 schemas: tenant_2, tenant_1, tenant_3');
  });
});
