/** A small shop schema for safety-path tests: cascades, a restrict, an audit trigger, a sequence. */
export const SHOP_SCHEMA = `
CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL UNIQUE, name text);
CREATE TABLE products (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL);
CREATE TABLE orders (
  id serial PRIMARY KEY,
  customer_id int NOT NULL REFERENCES customers(id) ON DELETE RESTRICT,
  total numeric(10,2) NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  created_at timestamptz NOT NULL
);
CREATE TABLE order_items (
  id serial PRIMARY KEY,
  order_id int NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  product_id int NOT NULL REFERENCES products(id),
  quantity int NOT NULL CHECK (quantity > 0)
);
CREATE TABLE audit_log (id bigserial PRIMARY KEY, table_name text, operation text, row_id int, at timestamptz DEFAULT now());
CREATE FUNCTION audit_orders() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_log (table_name, operation, row_id) VALUES (TG_TABLE_NAME, TG_OP, COALESCE(NEW.id, OLD.id));
  RETURN NULL;
END $$;
CREATE TRIGGER orders_audit AFTER INSERT OR UPDATE OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION audit_orders();
CREATE SEQUENCE order_seq;
CREATE VIEW order_totals AS SELECT customer_id, sum(total) AS total FROM orders GROUP BY customer_id;
INSERT INTO customers SELECT g, 'c' || g || '@example.com', 'Customer ' || g FROM generate_series(1, 20) g;
INSERT INTO products SELECT g, 'Product ' || g, (g * 3.5)::numeric(10,2) FROM generate_series(1, 10) g;
ALTER TABLE orders DISABLE TRIGGER orders_audit;
INSERT INTO orders (customer_id, total, status, created_at)
  SELECT 1 + (g % 20), (g * 7 % 300)::numeric(10,2), CASE WHEN g % 5 = 0 THEN 'cancelled' ELSE 'delivered' END,
         timestamptz '2024-01-01 00:00:00+00' + g * interval '1 day'
  FROM generate_series(1, 200) g;
ALTER TABLE orders ENABLE TRIGGER orders_audit;
INSERT INTO order_items (order_id, product_id, quantity) SELECT 1 + (g % 200), 1 + (g % 10), 1 + (g % 3) FROM generate_series(1, 500) g;
CREATE FUNCTION sneaky_write() RETURNS int LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit_log (table_name) VALUES ('sneaky'); RETURN 1; END $$;
ANALYZE;
`;

/** The same without the audit log, whose rows record events rather than data. */
export const SHOP_DATA_FINGERPRINT = `
SELECT md5(string_agg(t, '|' ORDER BY t)) AS fp FROM (
  SELECT 'c' || c::text AS t FROM customers c UNION ALL
  SELECT 'p' || p::text FROM products p UNION ALL
  SELECT 'o' || o::text FROM orders o UNION ALL
  SELECT 'i' || i::text FROM order_items i
) rows`;

/** A fingerprint of every row of the shop tables: equal fingerprints mean equal data. */
export const SHOP_FINGERPRINT = `
SELECT md5(string_agg(t, '|' ORDER BY t)) AS fp FROM (
  SELECT 'c' || c::text AS t FROM customers c UNION ALL
  SELECT 'p' || p::text FROM products p UNION ALL
  SELECT 'o' || o::text FROM orders o UNION ALL
  SELECT 'i' || i::text FROM order_items i UNION ALL
  SELECT 'a' || a.id || a.table_name || coalesce(a.operation, '') FROM audit_log a
) rows`;
