/** Scratch databases on the real server, created and dropped per test file or benchmark run. */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

export const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE_URL = ADMIN_DATABASE_URL;

/** A database of its own for one test file, dropped afterwards, so parallel runs never collide. */
export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** `adminUrl`: the server's maintenance database (default DATABASE_URL; the DBA tools' own cluster passes its own). */
export async function createScratchDatabase(
  prefix = 'pgagent_test',
  adminUrl = DATABASE_URL,
): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs SQL on a database through a plain pg client (test setup, independent of the code under test). */
export async function execSql(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The first value of the first row, through a plain pg client independent of the code under test. */
export async function queryValue(url: string, sql: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<unknown[]>({ text: sql, rowMode: 'array' });
    return result.rows[0]?.[0];
  } finally {
    await client.end();
  }
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
