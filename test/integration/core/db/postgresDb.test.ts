import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { introspectSchema } from '../../../../src/core/db/introspect';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { AgentError } from '../../../../src/core/platform/errors';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { closedPort } from '../../../support/scratchDatabase';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const SHOP = `
CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL UNIQUE, name text);
COMMENT ON TABLE customers IS 'People who buy';
COMMENT ON COLUMN customers.email IS 'Login and contact address';
CREATE TABLE orders (
  id int PRIMARY KEY,
  customer_id int NOT NULL REFERENCES customers(id) ON DELETE CASCADE ON UPDATE RESTRICT,
  total numeric(10,2) NOT NULL DEFAULT 0,
  placed_at timestamptz
);
CREATE INDEX orders_customer_idx ON orders(customer_id);
CREATE TABLE order_log (order_id int, note text, UNIQUE (order_id, note));
CREATE FUNCTION log_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO order_log VALUES (NEW.id, 'created'); RETURN NEW; END $$;
CREATE TRIGGER orders_log AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION log_order();
CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
CREATE SCHEMA archive;
CREATE MATERIALIZED VIEW archive.order_counts AS SELECT customer_id, count(*) AS n FROM orders GROUP BY 1;
INSERT INTO customers SELECT g, 'c' || g || '@example.com', 'C' || g FROM generate_series(1, 50) g;
ANALYZE customers;
`;

async function openError(url: string): Promise<AgentError> {
  try {
    const db = await openPostgres(parseConnectionUrl(url), { logger: silentLogger, connectTimeoutMs: 5000 });
    await db.close();
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error(`expected ${url} to fail`);
}

describe.runIf(postgresAvailable)('PostgreSQL through the Db interface', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, SHOP);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('introspects tables, views, keys, FK actions, indexes, triggers and comments', async () => {
    const snapshot = await db.withSession((s) => introspectSchema(s));
    expect(snapshot.database).toBe(scratch.name);
    const names = snapshot.tables.map((t) => `${t.schema}.${t.name}:${t.kind}`);
    expect(names).toEqual([
      'archive.order_counts:materialized_view',
      'public.big_orders:view',
      'public.customers:table',
      'public.order_log:table',
      'public.orders:table',
    ]);
    const customers = snapshot.tables.find((t) => t.name === 'customers');
    expect(customers).toMatchObject({
      comment: 'People who buy',
      primaryKey: ['id'],
      uniqueConstraints: [['email']],
      rowEstimate: 50,
    });
    expect(customers?.columns.find((c) => c.name === 'email')).toEqual({
      name: 'email',
      type: 'text',
      nullable: false,
      default: null,
      comment: 'Login and contact address',
      // Words of the values pg_stats knows (50 distinct addresses: few enough for histogram bounds), for linking only.
      valueWords: expect.arrayContaining(['example', 'com']) as unknown,
    });
    const orders = snapshot.tables.find((t) => t.name === 'orders');
    expect(orders?.foreignKeys).toEqual([
      {
        name: 'orders_customer_id_fkey',
        columns: ['customer_id'],
        references: { schema: 'public', table: 'customers', columns: ['id'] },
        onDelete: 'CASCADE',
        onUpdate: 'RESTRICT',
      },
    ]);
    expect(orders?.columns.find((c) => c.name === 'total')).toMatchObject({ type: 'numeric(10,2)', default: '0' });
    expect(orders?.indexes.map((i) => i.name)).toEqual(['orders_customer_idx', 'orders_pkey']);
    expect(orders?.triggers).toMatchObject([{ name: 'orders_log', enabled: true }]);
    expect(orders?.rowEstimate).toBeNull(); // never analyzed
    expect(snapshot.tables.find((t) => t.name === 'order_log')?.uniqueConstraints).toEqual([['order_id', 'note']]);
  });

  it('keeps one connection for a session: a transaction and SET LOCAL hold across its queries', async () => {
    const seen = await db.withSession(async (s) => {
      await s.query('BEGIN');
      await s.query(`SET LOCAL statement_timeout = '1234ms'`);
      await s.query(`INSERT INTO customers VALUES (1000, 'x@example.com', 'X')`);
      const timeout = await s.query<{ statement_timeout: string }>('SHOW statement_timeout');
      await s.query('ROLLBACK');
      return timeout.rows[0]?.statement_timeout;
    });
    expect(seen).toBe('1234ms');
    const after = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM customers WHERE id = 1000');
    expect(after.rows[0]?.n).toBe(0);
  });

  it('reports a query error with SQLSTATE and position', async () => {
    await expect(db.query('SELECT nope FROM customers')).rejects.toMatchObject({
      code: 'DB_QUERY_FAILED',
      sqlState: '42703',
      position: 8,
    });
  });

  it('reports a connection killed mid-session as DB_UNREACHABLE, and the pool recovers', async () => {
    const error = await db
      .withSession(async (s) => {
        const pid = await s.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await execSql(scratch.url, `SELECT pg_terminate_backend(${pid.rows[0]?.pid ?? 0})`);
        await s.query('SELECT 1');
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('DB_UNREACHABLE');
    const again = await db.query<{ one: number }>('SELECT 1 AS one');
    expect(again.rows[0]?.one).toBe(1);
  });
});

describe.runIf(postgresAvailable)('connection failures a person can act on', () => {
  it('unreachable port → DB_UNREACHABLE', async () => {
    const error = await openError(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`);
    expect(error.code).toBe('DB_UNREACHABLE');
    expect(error.message).toContain('connection refused');
  });

  it('missing database → DB_NOT_FOUND', async () => {
    const error = await openError('postgres://postgres@127.0.0.1:5432/pgagent_no_such_db');
    expect(error.code).toBe('DB_NOT_FOUND');
    expect(error.message).toContain('pgagent_no_such_db');
  });

  it('missing role → DB_ROLE_NOT_FOUND', async () => {
    const error = await openError('postgres://pgagent_no_such_role@127.0.0.1:5432/postgres');
    expect(error.code).toBe('DB_ROLE_NOT_FOUND');
  });

  it('sslmode=require against a server without SSL → DB_SSL_UNSUPPORTED; prefer falls back', async () => {
    const ssl = await execSslSetting();
    if (ssl === 'on') return; // This server speaks SSL; the mapping is covered by the unit test.
    const error = await openError('postgres://postgres@127.0.0.1:5432/postgres?sslmode=require');
    expect(error.code).toBe('DB_SSL_UNSUPPORTED');
    const db = await openPostgres(parseConnectionUrl('postgres://postgres@127.0.0.1:5432/postgres?sslmode=prefer'), {
      logger: silentLogger,
    });
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
    await db.close();
  });

  it('unresolvable host → DB_HOST_NOT_FOUND', async () => {
    const error = await openError('postgres://postgres@pgagent-no-such-host.invalid:5432/postgres');
    expect(error.code).toBe('DB_HOST_NOT_FOUND');
  });
});

async function execSslSetting(): Promise<string> {
  const db = await openPostgres(parseConnectionUrl('postgres://postgres@127.0.0.1:5432/postgres'), {
    logger: silentLogger,
  });
  try {
    return (await db.query<{ ssl: string }>('SHOW ssl')).rows[0]?.ssl ?? 'off';
  } finally {
    await db.close();
  }
}

describe.runIf(postgresAvailable)('sample values (opt-in)', () => {
  it('are off by default, and when asked come from pg_stats, capped in count and length', async () => {
    const scratch = await createScratchDatabase();
    try {
      await execSql(
        scratch.url,
        `CREATE TABLE tickets (id int PRIMARY KEY, status text, note text);
         INSERT INTO tickets SELECT g, (ARRAY['open','closed','waiting','escalated'])[1 + g % 4], repeat('x', 60) FROM generate_series(1, 400) g;
         ANALYZE tickets;`,
      );
      const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
      try {
        const plain = await db.withSession((s) => introspectSchema(s));
        expect(plain.tables[0]?.columns.every((c) => c.samples === undefined)).toBe(true);
        const sampled = await db.withSession((s) => introspectSchema(s, { sampleValues: true }));
        const status = sampled.tables[0]?.columns.find((c) => c.name === 'status');
        expect(status?.samples).toHaveLength(3);
        for (const v of status?.samples ?? []) expect(['open', 'closed', 'waiting', 'escalated']).toContain(v);
        const note = sampled.tables[0]?.columns.find((c) => c.name === 'note');
        expect(note?.samples?.[0]).toHaveLength(40);
      } finally {
        await db.close();
      }
    } finally {
      await scratch.drop();
    }
  });
});
