/**
 * A workload on the DBA cluster that creates each health finding for real (issue 26): a table with mostly dead
 * rows, an unused and a duplicate index, an INVALID index left by a failed CREATE INDEX CONCURRENTLY, a sequence
 * near its maximum, a foreign key without an index; and queries an index speeds up. Tables are the smallest that
 * show the effect.
 */
import { execSql } from './scratchDatabase';

export const DBA_SCHEMA = `
CREATE TABLE customers (id serial PRIMARY KEY, email text NOT NULL, region text NOT NULL);
INSERT INTO customers (email, region) SELECT 'c' || g || '@example.com', (ARRAY['north','south','east','west'])[1 + g % 4] FROM generate_series(1, 2000) g;
CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers, status text NOT NULL,
                     total numeric(10,2) NOT NULL, created_at timestamptz NOT NULL);
INSERT INTO orders (customer_id, status, total, created_at)
  SELECT 1 + g % 2000, (ARRAY['new','paid','shipped','cancelled'])[1 + g % 4], (g % 500) + 0.99, timestamptz '2026-01-01' + g * interval '1 minute'
    FROM generate_series(1, 20000) g;
CREATE INDEX orders_status_idx ON orders (status);
CREATE INDEX orders_status_copy_idx ON orders (status);
CREATE TABLE events (id serial PRIMARY KEY, payload text NOT NULL);
INSERT INTO events (payload) SELECT repeat('x', 80) FROM generate_series(1, 10000);
DELETE FROM events WHERE id % 10 <> 0;
CREATE TABLE tags (name text NOT NULL);
INSERT INTO tags VALUES ('a'), ('a'), ('b');
CREATE SEQUENCE ticket_no MAXVALUE 100;
SELECT setval('ticket_no', 95);
ANALYZE;
`;

/** Runs the workload; the INVALID index comes from a unique index built concurrently over duplicates, as in life. */
export async function loadDbaWorkload(url: string): Promise<void> {
  await execSql(url, DBA_SCHEMA);
  await execSql(url, 'CREATE UNIQUE INDEX CONCURRENTLY tags_name_key ON tags (name)').catch(() => undefined);
}
