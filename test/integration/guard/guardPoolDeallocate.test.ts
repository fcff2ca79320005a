/**
 * `pg-agent guard --pool transaction` and a client forgetting its prepared statements (node-postgres, a real
 * guard process, a pool of one upstream session): the server holds a client's "name" as the pool's `pa_<hash>`,
 * so `DEALLOCATE name` and a protocol Close act on the client's own name (the client gets success, the server
 * never sees the client's name), an unknown name fails as on the server, inside an aborted transaction it is
 * refused and the statement stays, and DEALLOCATE ALL leaves the server session with no prepared statement.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, postgresAvailable } from '../../support/services';
import { connect, failure } from '../../support/pgClients';

/** The server session's prepared statements (the pool has one session: the one every query of the test runs on). */
async function serverStatements(client: pg.Client): Promise<{ name: string; statement: string }[]> {
  const result = await client.query<{ name: string; statement: string }>(
    'SELECT name, statement FROM pg_prepared_statements ORDER BY name',
  );
  return result.rows;
}

/** Runs a statement node-postgres prepared before: it sends Bind and Execute only, so the server must know the name. */
const rerun = (client: pg.Client, name: string, text: string) =>
  client.query({ name, text }).then(
    (result) => `ran ${JSON.stringify(result.rows[0])}`,
    (error: { code?: string }) => error.code,
  );

describe.skipIf(!postgresAvailable)('pg-agent guard --pool transaction: DEALLOCATE and Close', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createScratchDatabase('pooldealloc');
    guard = await startGuardProcess(db.url, { args: ['--pool', 'transaction', '--pool-size', '1'] });
    client = await connect(guard.url, 'pool-dealloc');
  }, 120_000);

  afterAll(async () => {
    await client?.end().catch(() => undefined);
    await guard?.stop();
    await db?.drop();
  });

  it('DEALLOCATE name forgets the client own statement: success, and the name is gone for the client', async () => {
    const text = 'SELECT 1 AS one';
    expect(await rerun(client, 'dealloc_one', text)).toBe('ran {"one":1}');
    const before = await serverStatements(client);
    expect(before.map((s) => s.statement)).toContain(text);
    expect(before.every((s) => s.name.startsWith('pa_'))).toBe(true);

    const answer = await client.query('DEALLOCATE dealloc_one');
    expect(answer.command).toBe('DEALLOCATE');
    // The client's name is gone: a Bind to it fails as on a server that deallocated it.
    expect(await rerun(client, 'dealloc_one', text)).toBe('26000');
    // A name the client never prepared fails as on the server.
    expect((await failure(client.query('DEALLOCATE dealloc_never')))?.code).toBe('26000');
    expect((await serverStatements(client)).some((s) => s.name.startsWith('dealloc'))).toBe(false);
  });

  it('inside a transaction it answers with the transaction still open; in an aborted one it is refused and the name stays', async () => {
    const text = 'SELECT 2 AS two';
    expect(await rerun(client, 'dealloc_two', text)).toBe('ran {"two":2}');
    await client.query('BEGIN');
    expect((await client.query('DEALLOCATE dealloc_two')).command).toBe('DEALLOCATE');
    expect((await client.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
    await client.query('COMMIT');
    expect(await rerun(client, 'dealloc_two', text)).toBe('26000');

    const kept = 'SELECT 4 AS four';
    expect(await rerun(client, 'dealloc_four', kept)).toBe('ran {"four":4}');
    await client.query('BEGIN');
    expect((await failure(client.query('SELECT 1/0')))?.code).toBe('22012');
    expect((await failure(client.query('DEALLOCATE dealloc_four')))?.code).toBe('25P02');
    await client.query('ROLLBACK');
    expect(await rerun(client, 'dealloc_four', kept)).toBe('ran {"four":4}');
  });

  it('a protocol Close of a statement forgets the client own name with CloseComplete', async () => {
    const text = 'SELECT 5 AS five';
    expect(await rerun(client, 'dealloc_five', text)).toBe('ran {"five":5}');
    // node-postgres's own Close and Sync: CloseComplete, then ReadyForQuery.
    const connection = (
      client as unknown as {
        connection: {
          close(message: { type: 'S'; name: string }): void;
          sync(): void;
          once(event: string, listener: () => void): void;
        };
      }
    ).connection;
    const closed = new Promise<void>((resolve) => connection.once('closeComplete', resolve));
    const ready = new Promise<void>((resolve) => connection.once('readyForQuery', resolve));
    connection.close({ type: 'S', name: 'dealloc_five' });
    connection.sync();
    await closed;
    await ready;
    expect(await rerun(client, 'dealloc_five', text)).toBe('26000');
  });

  it('DEALLOCATE ALL leaves no prepared statement on the server session and none for the client', async () => {
    const text = 'SELECT 6 AS six';
    expect(await rerun(client, 'dealloc_six', text)).toBe('ran {"six":6}');
    expect((await serverStatements(client)).length).toBeGreaterThan(0);
    expect((await client.query('DEALLOCATE ALL')).command).toBe('DEALLOCATE');
    expect(await serverStatements(client)).toEqual([]);
    expect(await rerun(client, 'dealloc_six', text)).toBe('26000');
  });
});
