/** node-postgres clients as the tests open them against a guard or a server that may vanish under them. */
import type net from 'node:net';
import pg from 'pg';

/** Connected; an error after connecting (a killed guard, a terminated session) is the test's to see, not a crash. */
export async function connect(url: string, application?: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: application });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** The error a query ends with, or undefined when it succeeds. */
export const failure = (promise: Promise<unknown>): Promise<pg.DatabaseError | undefined> =>
  promise.then(
    () => undefined,
    (error: pg.DatabaseError) => error,
  );

/** The client's socket, to write raw bytes or cut it. */
export const streamOf = (client: pg.Client): net.Socket =>
  (client as unknown as { connection: { stream: net.Socket } }).connection.stream;

/**
 * One transaction on a new client of `url`: BEGIN, `steps`, COMMIT. The message of the error it ended with (the
 * transaction then rolled back), or undefined when it committed; the client is closed either way.
 */
export async function transactionError(
  url: string,
  application: string,
  steps: (client: pg.Client) => Promise<unknown>,
): Promise<string | undefined> {
  const client = await connect(url, application);
  try {
    await client.query('BEGIN');
    await steps(client);
    await client.query('COMMIT');
    return undefined;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    return (error as Error).message;
  } finally {
    await client.end();
  }
}
