// The reach engine on the embedded sample database (PGlite, PostgreSQL 18): the catalog query works there,
// the shop's reads reach nothing (no false holds), and its writes reach the audit trigger and the sequences.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import { openSampleDb } from '../../../../src/core/db/sample/openSampleDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { loadParser, parseSql } from '../../../../src/core/sql/parse';
import { reachOf } from '../../../../src/core/sql/reach/reachOf';

/** Reads a person asks of the shop: the demo's, every table and view, joins, aggregates, windows, JSON. */
const READS = [
  'SELECT status, count(*) AS orders, sum(total) AS revenue FROM orders GROUP BY status ORDER BY orders DESC',
  'SELECT * FROM categories',
  'SELECT * FROM customers',
  'SELECT * FROM addresses',
  'SELECT * FROM products',
  'SELECT * FROM orders',
  'SELECT * FROM order_items',
  'SELECT * FROM payments',
  'SELECT * FROM shipments',
  'SELECT * FROM reviews',
  'SELECT * FROM audit_log',
  'SELECT * FROM customer_order_totals ORDER BY lifetime_value DESC LIMIT 10',
  "SELECT date_trunc('month', created_at) AS month, sum(total) FROM orders WHERE status <> 'cancelled' GROUP BY 1 ORDER BY 1",
  "SELECT lower(email), upper(first_name || ' ' || last_name) FROM customers WHERE email ILIKE '%@example.%' AND created_at > now() - interval '1 year'",
  'SELECT p.name, sum(oi.quantity * oi.unit_price) AS revenue, rank() OVER (ORDER BY sum(oi.quantity * oi.unit_price) DESC) FROM order_items oi JOIN products p ON p.id = oi.product_id GROUP BY p.name',
  "SELECT name, attributes->>'color' AS color, tags FROM products WHERE 'sale' = ANY (tags) AND price BETWEEN 10 AND 100",
  'SELECT c.name, count(p.id) FROM categories c LEFT JOIN products p ON p.category_id = c.id GROUP BY c.name HAVING count(p.id) > 0',
  "WITH recent AS (SELECT * FROM orders WHERE created_at > now() - interval '30 days') SELECT count(*), avg(total)::numeric(10,2) FROM recent",
  'SELECT o.id, (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) FROM orders o ORDER BY o.id LIMIT 5',
  'SELECT coalesce(avg(rating), 0), percentile_cont(0.5) WITHIN GROUP (ORDER BY rating) FROM reviews',
  "SELECT to_char(created_at, 'YYYY-MM'), string_agg(DISTINCT status, ',') FROM orders GROUP BY 1",
  "SELECT EXISTS (SELECT 1 FROM payments WHERE status = 'failed'), greatest(1, 2), now()::date, extract(year FROM now())",
];

describe('the reach engine on the sample database (PGlite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-reach-sample-'));
  let db: Db;

  beforeAll(async () => {
    await loadParser();
    db = await openSampleDb({ dataDir: join(dir, 'sample-db'), logger: silentLogger });
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reaches nothing from the shop's reads", async () => {
    const reaches = await reachOf(
      db,
      READS.flatMap((sql) => parseSql(sql).statements),
    );
    const held = reaches.flatMap((r, i) =>
      r.effects.length > 0 ? [`${READS[i]}: ${r.effects.map((e) => e.reason).join('; ')}`] : [],
    );
    expect(held).toEqual([]);
  });

  it('reaches the audit trigger, its write and the identity sequences from writes', async () => {
    const [del] = await reachOf(db, parseSql("DELETE FROM orders WHERE status = 'cancelled'").statements);
    expect(del?.entries).toContainEqual({
      function: 'public.audit_row_change()',
      via: 'trigger orders_audit on public.orders (AFTER DELETE, row)',
      verdict: 'side-effect',
      effect: 'runs INSERT INTO public.audit_log',
    });
    expect(del?.effects.map((e) => e.kind)).toEqual(['write', 'sequence']);
    expect(del?.sequences).toEqual(['public.audit_log_id_seq']);
    // The cascade reaches order_items, payments and shipments: no code there, so nothing more.
    expect(del?.effects[0]?.reason).toBe(
      'public.audit_row_change() (trigger orders_audit on public.orders (AFTER DELETE, row)) runs INSERT INTO public.audit_log',
    );
    const [insert] = await reachOf(db, parseSql("INSERT INTO categories (name) VALUES ('x')").statements);
    expect(insert?.sequences).toEqual(['public.categories_id_seq']);
  });
});
