// Deterministic data of the sample shop (about 60,000 rows), generated inside the database with
// generate_series and integer arithmetic so every generation produces byte-identical tables.

import {
  ADJECTIVES,
  BASE_PRICES,
  CARRIERS,
  CITIES,
  COLORS,
  COUNTRY_CODES,
  EMAIL_DOMAINS,
  FIRST_NAMES,
  LAST_NAMES,
  POSTAL_CODES,
  PRODUCT_NOUNS,
  REVIEW_TITLES,
  STREETS,
  categoryRows,
  textArray,
} from './sampleWords';

/**
 * Why no random() and no now(): two people (or two test runs) must get the same database, so a question
 * asked in a tutorial or a bug report has the same answer everywhere. Values are picked from small arrays
 * by index arithmetic such as `(i * 7919) % 100` (7919 is prime, so the picks spread evenly).
 *
 * The timeline is fixed: customers sign up from 2023-09-01, orders run from 2023-10-01 for about three
 * years (to late September 2026), so "orders older than two years" has an answer that does not depend on
 * the day the database was generated.
 *
 * The orders_audit trigger does not fire while seeding (session_replication_role = replica, see the first
 * step): the seed is not a change anybody made, so a fresh database has an empty audit_log, and 10,000
 * jsonb audit rows would slow the first open down.
 */

export interface SeedStep {
  /** What is being generated, for progress messages ("orders"). */
  label: string;
  sql: string;
}

/** Row counts of a freshly generated database; the integration test checks them against the real tables. */
export const SAMPLE_ROW_COUNTS = {
  categories: 20,
  customers: 2_000,
  addresses: 2_600,
  products: 500,
  orders: 10_000,
  order_items: 25_000,
  payments: 9_562,
  shipments: 8_522,
  reviews: 3_000,
  audit_log: 0,
} as const satisfies Record<string, number>;

/** The steps in order; each is one statement, run inside the generation transaction. */
export const SAMPLE_DATA_STEPS: readonly SeedStep[] = [
  // Replica mode skips the orders_audit trigger and the foreign-key triggers for this transaction: the
  // seed is consistent by construction (the integration test checks every foreign key), and the 60,000
  // per-row key checks would be most of the generation time. CHECK and UNIQUE constraints still apply.
  { label: 'bulk-load mode', sql: 'SET LOCAL session_replication_role = replica' },
  // Adding days to a timestamptz depends on the time zone (DST); fix it so no setting can change the data.
  { label: 'time zone', sql: "SET LOCAL TimeZone = 'UTC'" },
  {
    label: 'categories',
    sql: `INSERT INTO public.categories (id, parent_id, name, slug, description) VALUES ${categoryRows.join(', ')}`,
  },
  {
    label: 'customers',
    sql: `INSERT INTO public.customers
      (id, email, first_name, last_name, phone, birth_date, is_active, marketing_opt_in, signup_ip, created_at)
    SELECT c, lower(replace(f, ' ', '') || '.' || replace(replace(l, ' ', ''), 'ü', 'ue') || c || '@'
                    || (${textArray(EMAIL_DOMAINS)})[1 + c % 4]),
           f, l,
           CASE WHEN c % 8 <> 0 THEN '+49 ' || (150 + c % 30) || ' ' || lpad(((c * 7919) % 10000000)::text, 7, '0') END,
           CASE WHEN c % 15 <> 0 THEN date '1955-01-01' + (c * 7919) % 18000 END,
           c % 25 <> 0,
           c % 3 = 0,
           CASE WHEN c % 5 = 0 THEN ('2001:db8::' || to_hex(c))::inet
                ELSE ((CASE c % 2 WHEN 0 THEN '198.51.100.' ELSE '203.0.113.' END) || (1 + (c * 37) % 254))::inet END,
           timestamptz '2023-09-01 00:00:00+00' + (c - 1) * interval '789 minutes' + (c * 7919) % 600 * interval '1 second'
      FROM generate_series(1, 2000) AS c,
           LATERAL (SELECT (${textArray(FIRST_NAMES)})[1 + (c * 7) % 40] AS f,
                           (${textArray(LAST_NAMES)})[1 + (c * 13 + c / 40) % 40] AS l) AS n`,
  },
  {
    // Address c is customer c's shipping address; 2001-2600 are billing addresses of every third customer.
    label: 'addresses',
    sql: `INSERT INTO public.addresses (id, customer_id, kind, line1, city, postal_code, country_code, is_default, created_at)
    SELECT a.id, a.customer_id, a.kind,
           (${textArray(STREETS)})[1 + (a.id * 7) % 20] || ' ' || (1 + (a.id * 7919) % 180),
           (${textArray(CITIES)})[1 + (a.customer_id * 11) % 20],
           (${textArray(POSTAL_CODES)})[1 + (a.customer_id * 11) % 20],
           (${textArray(COUNTRY_CODES)})[1 + (a.customer_id * 11) % 20],
           a.kind = 'shipping',
           c.created_at + (a.id % 7) * interval '1 minute'
      FROM (SELECT s AS id, s AS customer_id, 'shipping' AS kind FROM generate_series(1, 2000) AS s
            UNION ALL
            SELECT 2000 + k, 3 * k, 'billing' FROM generate_series(1, 600) AS k) AS a
      JOIN public.customers c ON c.id = a.customer_id`,
  },
  {
    label: 'products',
    sql: `INSERT INTO public.products
      (id, category_id, sku, name, description, price, cost, stock_quantity, attributes, tags, is_active, created_at)
    SELECT p, 6 + k, 'SKU-' || lpad(p::text, 5, '0'), adj || ' ' || noun,
           noun || ' in ' || color || ', ' || lower(adj) || ' edition.',
           price, round(price * (45 + (p * 31) % 25) / 100, 2),
           CASE WHEN p % 23 = 0 THEN 0 ELSE 1 + (p * 7919) % 240 END,
           jsonb_build_object('color', color, 'weight_g', 100 + (p * 37) % 4900)
             || CASE WHEN k < 3 THEN jsonb_build_object('warranty_years', 1 + p % 3) ELSE '{}'::jsonb END,
           array_remove(ARRAY[CASE WHEN p % 7 = 0 THEN 'sale' END, CASE WHEN p % 5 = 0 THEN 'new' END,
                              CASE WHEN p % 11 = 0 THEN 'eco' END, CASE WHEN p % 13 = 0 THEN 'bestseller' END], NULL),
           p % 29 <> 0,
           timestamptz '2023-01-01 00:00:00+00' + p * interval '12 hours'
      FROM generate_series(1, 500) AS p,
           LATERAL (SELECT (p - 1) % 15 AS k) AS kk,
           LATERAL (SELECT (${textArray(ADJECTIVES)})[1 + (p * 7) % 12] AS adj,
                           (${textArray(PRODUCT_NOUNS)})[1 + k * 4 + (p / 15) % 4] AS noun,
                           (${textArray(COLORS)})[1 + p % 8] AS color,
                           floor((ARRAY[${BASE_PRICES.join(', ')}])[1 + k] * (50 + (p * 7919) % 100) / 100.0) + 0.99 AS price) AS v`,
  },
  {
    // Most orders are delivered; the most recent 150 are still open. A customer is picked among those who
    // had signed up by then, so early customers have more orders and some late ones have none. The
    // `% 100003` (a prime) scrambles i first: `(i * 7919) % (i / 5)` alone is 0 whenever 5 divides i.
    label: 'orders (plan)',
    sql: `CREATE TEMP TABLE seed_orders ON COMMIT DROP AS
    SELECT i AS id, 1 + (i * 7919) % 100003 % greatest(50, i / 5) AS customer_id, status, created_at,
           1 + (i * 7) % 4 AS item_count,
           shipped_at,
           CASE WHEN status IN ('delivered', 'refunded') THEN shipped_at + (1 + (i * 7) % 5) * interval '1 day' END AS delivered_at,
           CASE WHEN i % 40 = 0 THEN 'Please leave the parcel with a neighbour.'
                WHEN i % 97 = 0 THEN 'Gift wrap, please.' END AS note
      FROM generate_series(1, 10000) AS i,
           LATERAL (SELECT timestamptz '2023-10-01 00:00:00+00' + i * interval '157 minutes'
                             + (i * 7919) % 3600 * interval '1 second' AS created_at,
                           CASE WHEN i > 9850 THEN (ARRAY['pending', 'paid', 'shipped'])[1 + i % 3]
                                WHEN (i * 7919) % 100 < 80 THEN 'delivered'
                                WHEN (i * 7919) % 100 < 88 THEN 'cancelled'
                                WHEN (i * 7919) % 100 < 91 THEN 'refunded'
                                WHEN (i * 7919) % 100 < 95 THEN 'pending'
                                WHEN (i * 7919) % 100 < 97 THEN 'paid'
                                ELSE 'shipped' END AS status) AS s,
           LATERAL (SELECT CASE WHEN status IN ('shipped', 'delivered', 'refunded')
                                THEN created_at + (1 + i % 3) * interval '1 day' + i % 7 * interval '1 hour' END
                             AS shipped_at) AS t`,
  },
  {
    label: 'order items (plan)',
    sql: `CREATE TEMP TABLE seed_items ON COMMIT DROP AS
    SELECT row_number() OVER (ORDER BY o.id, j) AS id, o.id AS order_id, p.id AS product_id, q.quantity, u.unit_price,
           CASE WHEN o.id % 9 = 0 THEN round(u.unit_price * q.quantity * 0.10, 2) ELSE 0 END AS discount
      FROM seed_orders o
     CROSS JOIN LATERAL generate_series(1, o.item_count) AS j
      JOIN public.products p ON p.id = 1 + (o.id * 31 + j * 7919) % 500,
           LATERAL (SELECT CASE WHEN (o.id + j) % 10 < 7 THEN 1 WHEN (o.id + j) % 10 < 9 THEN 2
                                ELSE 3 + o.id % 3 END AS quantity) AS q,
           LATERAL (SELECT round(p.price * (100 - o.id % 4 * 5) / 100, 2) AS unit_price) AS u`,
  },
  {
    label: 'orders',
    sql: `INSERT INTO public.orders (id, customer_id, shipping_address_id, status, subtotal, discount_total, shipping_fee,
                               total, note, created_at, updated_at)
    SELECT o.id, o.customer_id, o.customer_id, o.status, m.subtotal, m.discount_total, f.shipping_fee,
           m.subtotal - m.discount_total + f.shipping_fee, o.note, o.created_at,
           CASE o.status WHEN 'pending' THEN o.created_at
                         WHEN 'paid' THEN o.created_at + interval '20 minutes'
                         WHEN 'cancelled' THEN o.created_at + interval '2 days'
                         WHEN 'shipped' THEN o.shipped_at
                         WHEN 'delivered' THEN o.delivered_at
                         ELSE o.delivered_at + interval '10 days' END
      FROM seed_orders o
      JOIN (SELECT order_id, sum(quantity * unit_price) AS subtotal, sum(discount) AS discount_total
              FROM seed_items GROUP BY order_id) AS m ON m.order_id = o.id,
           LATERAL (SELECT CASE WHEN m.subtotal - m.discount_total >= 50 THEN 0 ELSE 4.95 END AS shipping_fee) AS f
     ORDER BY o.id`,
  },
  {
    label: 'order items',
    sql: `INSERT INTO public.order_items (id, order_id, product_id, quantity, unit_price, discount)
    SELECT id, order_id, product_id, quantity, unit_price, discount FROM seed_items ORDER BY id`,
  },
  {
    // One captured (or refunded) payment per paid order; every 20th paid order had a failed card attempt
    // first, and half of the cancelled orders were cancelled after a failed payment.
    label: 'payments',
    sql: `INSERT INTO public.payments (id, order_id, method, status, amount, provider_ref, paid_at)
    SELECT row_number() OVER (ORDER BY a.order_id, a.attempt), a.order_id, a.method, a.status, a.amount,
           'pay_' || substr(md5('payment-' || a.order_id || '-' || a.attempt), 1, 16), a.paid_at
      FROM (SELECT o.id AS order_id, 2 AS attempt,
                   CASE WHEN (o.id * 13) % 20 < 10 THEN 'card' WHEN (o.id * 13) % 20 < 15 THEN 'paypal'
                        WHEN (o.id * 13) % 20 < 18 THEN 'bank_transfer' ELSE 'gift_card' END AS method,
                   CASE WHEN o.status = 'refunded' THEN 'refunded' ELSE 'captured' END AS status,
                   o.total AS amount, o.created_at + (2 + o.id % 30) * interval '1 minute' AS paid_at
              FROM public.orders o WHERE o.status IN ('paid', 'shipped', 'delivered', 'refunded')
            UNION ALL
            SELECT o.id, 1, 'card', 'failed', o.total, o.created_at + interval '1 minute'
              FROM public.orders o
             WHERE (o.status IN ('paid', 'shipped', 'delivered', 'refunded') AND o.id % 20 = 0)
                OR (o.status = 'cancelled' AND o.id % 2 = 0)) AS a`,
  },
  {
    label: 'shipments',
    sql: `INSERT INTO public.shipments (id, order_id, carrier, tracking_number, status, shipped_at, delivered_at)
    SELECT row_number() OVER (ORDER BY o.id), o.id, carrier,
           upper(left(carrier, 3)) || lpad((o.id * 7919 % 100000000)::text, 8, '0') || lpad(o.id::text, 5, '0'),
           CASE o.status WHEN 'shipped' THEN 'in_transit' WHEN 'delivered' THEN 'delivered' ELSE 'returned' END,
           o.shipped_at, o.delivered_at
      FROM seed_orders o,
           LATERAL (SELECT (${textArray(CARRIERS)})[1 + o.id % 5] AS carrier) AS c
     WHERE o.status IN ('shipped', 'delivered', 'refunded')`,
  },
  {
    // Ratings lean positive, as in real shops. (k mod 500, 7k mod 1999) never repeats for k <= 3000, which
    // keeps (product_id, customer_id) unique.
    label: 'reviews',
    sql: `INSERT INTO public.reviews (id, product_id, customer_id, rating, title, body, is_verified_purchase, created_at)
    SELECT k, 1 + k % 500, c.id, r.rating, (${textArray(REVIEW_TITLES)})[r.rating],
           CASE WHEN k % 4 <> 0 THEN 'Review ' || k || ': ' || (${textArray(REVIEW_TITLES)})[r.rating]
                || ' - ' || substr(md5('review-' || k), 1, 12) || '.' END,
           EXISTS (SELECT 1 FROM public.order_items i JOIN public.orders o ON o.id = i.order_id
                    WHERE i.product_id = 1 + k % 500 AND o.customer_id = c.id),
           greatest(c.created_at + interval '3 days',
                    timestamptz '2023-11-01 00:00:00+00' + k * interval '520 minutes')
      FROM generate_series(1, 3000) AS k
      JOIN public.customers c ON c.id = 1 + (k * 7) % 1999,
           LATERAL (SELECT CASE WHEN (k * 7919) % 100 < 45 THEN 5 WHEN (k * 7919) % 100 < 75 THEN 4
                                WHEN (k * 7919) % 100 < 87 THEN 3 WHEN (k * 7919) % 100 < 94 THEN 2
                                ELSE 1 END AS rating) AS r
     ORDER BY k`,
  },
  {
    // Explicit ids were inserted, so the sequences must move past them for the next INSERT to work.
    label: 'sequences',
    sql: `SELECT setval(pg_get_serial_sequence('public.' || t, 'id'), m)
      FROM (VALUES ('categories', (SELECT max(id) FROM public.categories)),
                   ('customers', (SELECT max(id) FROM public.customers)),
                   ('addresses', (SELECT max(id) FROM public.addresses)),
                   ('products', (SELECT max(id) FROM public.products)),
                   ('orders', (SELECT max(id) FROM public.orders)),
                   ('order_items', (SELECT max(id) FROM public.order_items)),
                   ('payments', (SELECT max(id) FROM public.payments)),
                   ('shipments', (SELECT max(id) FROM public.shipments)),
                   ('reviews', (SELECT max(id) FROM public.reviews))) AS s (t, m)`,
  },
  { label: 'normal mode', sql: 'SET LOCAL session_replication_role = origin' },
  // So planner estimates and pg_class.reltuples match the data from the first query on.
  { label: 'statistics', sql: 'ANALYZE' },
];
