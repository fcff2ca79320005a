/**
 * Counted, not read from the code (issue 23): `pg-agent ask` parses its SQL once and EXPLAINs a write once,
 * and an approved write parses the ticket's SQL once at execution. The real parser is wrapped to count
 * its inputs; the real driver (`pg.Client#query`) is watched for what reaches PostgreSQL.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryValue } from '../../support/scratchDatabase';
import { postgresAvailable } from '../../support/services';
import type * as Parse from '../../../src/core/sql/parse';
import { useScriptedModel, useShopWorkspace } from '../../support/shopDatabase';

/** Every input the parser was given, in order, by whoever called it. */
const parsed = vi.hoisted(() => [] as string[]);

vi.mock('../../../src/core/sql/parse', async (importOriginal) => {
  const real = await importOriginal<typeof Parse>();
  return {
    ...real,
    parseSql: (input: string) => {
      parsed.push(input);
      return real.parseSql(input);
    },
  };
});

describe.runIf(postgresAvailable)('pg-agent ask parses and EXPLAINs its SQL once (counted)', () => {
  const shop = useShopWorkspace('pgagent-ask-counts');
  const model = useScriptedModel();
  /** The driver's query method, watched (it still runs): what this process sent to PostgreSQL. */
  let driver: ReturnType<typeof watchDriver>;
  const watchDriver = () => vi.spyOn(pg.Client.prototype, 'query');
  const sentTexts = (): string[] =>
    driver.mock.calls.map(([first]: unknown[]) =>
      typeof first === 'string' ? first : isRecord(first) && typeof first.text === 'string' ? first.text : '',
    );

  const parsesOf = (sql: string) => parsed.filter((input) => input.trim() === sql).length;
  const explainsOf = (sql: string) =>
    sentTexts().filter((text) => /^\s*EXPLAIN\b/i.test(text) && text.includes(sql)).length;
  const modelWrites = (sql: string, operation: 'read' | 'write', table: string) =>
    model.server.script([
      { reply: { json: { operation, tables: [table], confidence: 0.9 } } },
      { reply: { json: { sql, operation, explanation: 'scripted' } } },
      ...(operation === 'read' ? [{ reply: { text: 'Done.' } }] : []),
    ]);

  beforeEach(() => {
    parsed.length = 0;
    driver = watchDriver();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a read: parsed once, from validation to its rows', async () => {
    const sql = 'SELECT email FROM customers WHERE id = 2';
    modelWrites(sql, 'read', 'customers');
    const run = await shop.cli(['ask', '--json', '--', "Customer 2's email?"], { env: model.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'executed', rows: [['c2@example.com']] });
    expect(parsesOf(sql)).toBe(1);
    // The read itself reached the server once (through its cursor), and its validation EXPLAINed it once.
    expect(sentTexts().filter((text) => text.includes(sql) && !/^\s*EXPLAIN\b/i.test(text))).toHaveLength(1);
    expect(explainsOf(sql)).toBe(1);
  });

  it('a held write: parsed once and EXPLAINed once (validation and preview share the plan)', async () => {
    const sql = 'DELETE FROM orders WHERE id BETWEEN 10 AND 12';
    modelWrites(sql, 'write', 'orders');
    const run = await shop.cli(['ask', '--no-input', '--json', '--', 'Delete orders 10 to 12'], { env: model.env() });
    expect(run.code, run.stderr).toBe(3);
    const out = JSON.parse(run.stdout) as { impact: { estimatedRows: number | null; exactRows: number | null } };
    expect(parsesOf(sql)).toBe(1);
    expect(explainsOf(sql)).toBe(1);
    // The preview still measured it (3 orders, their items and the audit rows), and the estimate it reports
    // is the validation's plan.
    expect(out.impact.exactRows).toBeGreaterThanOrEqual(3);
    expect(out.impact.estimatedRows).toBeGreaterThan(0);
    // The preview ran it once, inside a transaction it rolled back: the rows are all still there.
    expect(sentTexts().filter((text) => text.trim() === sql)).toHaveLength(1);
    expect(Number(await queryValue(shop.scratch.url, 'SELECT count(*) FROM orders WHERE id BETWEEN 10 AND 12'))).toBe(
      3,
    );
  });

  it('a write approved at the terminal: parsed once by ask and once at execution, EXPLAINed once', async () => {
    const sql = "UPDATE products SET name = 'Counted' WHERE id = 4";
    modelWrites(sql, 'write', 'products');
    const run = await shop.cli(['ask', '--', 'Rename product 4'], { env: model.env(), answers: ['y'] });
    expect(run.code, run.stderr).toBe(0);
    expect(await queryValue(shop.scratch.url, 'SELECT name FROM products WHERE id = 4')).toBe('Counted');
    expect(parsesOf(sql)).toBe(2);
    expect(explainsOf(sql)).toBe(1);
  });

  it('pg-agent impact: its input parsed once, for the check and the lock model', async () => {
    const sql = 'ALTER TABLE orders ADD COLUMN note text';
    const run = await shop.cli(['impact', '--json', '--', sql]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { locks: { mode: string }[] }).locks).toEqual([
      expect.objectContaining({ mode: 'ACCESS EXCLUSIVE' }),
    ]);
    expect(parsesOf(sql)).toBe(1);
    expect(
      Number(
        await queryValue(
          shop.scratch.url,
          "SELECT count(*) FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'note'",
        ),
      ),
    ).toBe(0);
  });

  it("DDL: the lock model reads the validation's parse instead of parsing again", async () => {
    const sql = 'CREATE INDEX orders_total_idx ON orders (total)';
    modelWrites(sql, 'write', 'orders');
    const run = await shop.cli(['ask', '--no-input', '--json', '--', 'Index order totals'], { env: model.env() });
    expect(run.code, run.stderr).toBe(3);
    const out = JSON.parse(run.stdout) as { impact: { locks: { table: string; mode: string }[] } };
    expect(out.impact.locks).toEqual([expect.objectContaining({ mode: 'SHARE' })]);
    expect(parsesOf(sql)).toBe(1);
    expect(
      Number(
        await queryValue(shop.scratch.url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'orders_total_idx'"),
      ),
    ).toBe(0);
  });
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
