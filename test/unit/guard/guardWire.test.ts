/**
 * The guard's byte-level pieces that need no server: frontend messages read field by field (and refused
 * when malformed), a statement with its Bind values as literals, what the upstream still owes, and the
 * start-up parameters a client may ask for.
 */
import { BackendError } from 'pg-gateway';
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { bindSql, knownNullBoundSql, nullBoundSql } from '../../../src/guard/judge/boundSql';
import { knownTransactionControlOf, transactionControlOf } from '../../../src/guard/judge/transactionControl';
import { checkStartup } from '../../../src/guard/session/startupParameters';
import { MalformedMessage, readFrontendMessage } from '../../../src/guard/wire/frontendMessages';
import { PendingResponses } from '../../../src/guard/wire/pendingResponses';

describe('frontend messages', () => {
  it('reads what node-postgres serializes: Query, Parse, Bind, Execute, Describe, Close, Sync', () => {
    expect(readFrontendMessage(serialize.query('SELECT 1'))).toEqual({ type: 'query', sql: 'SELECT 1' });
    expect(readFrontendMessage(serialize.parse({ name: 's1', text: 'SELECT $1', types: [23] }))).toEqual({
      type: 'parse',
      name: 's1',
      sql: 'SELECT $1',
      paramTypes: [23],
    });
    const bind = readFrontendMessage(serialize.bind({ portal: 'p', statement: 's1', values: ["it's", null] }));
    expect(bind).toMatchObject({ type: 'bind', portal: 'p', statement: 's1', params: [Buffer.from("it's"), null] });
    expect(readFrontendMessage(serialize.execute({ portal: 'p', rows: 10 }))).toEqual({
      type: 'execute',
      portal: 'p',
      maxRows: 10,
    });
    expect(readFrontendMessage(serialize.describe({ type: 'P', name: 'p' }))).toEqual({
      type: 'describe',
      target: 'P',
      name: 'p',
    });
    expect(readFrontendMessage(serialize.close({ type: 'S', name: 's1' }))).toEqual({
      type: 'close',
      target: 'S',
      name: 's1',
    });
    expect(readFrontendMessage(serialize.sync())).toEqual({ type: 'sync' });
  });

  it('refuses a message whose length lies, a string without its zero byte, invalid UTF-8 and a parameter past the end', () => {
    const query = serialize.query('SELECT 1');
    expect(() => readFrontendMessage(query.subarray(0, query.length - 1))).toThrow(MalformedMessage);
    const noZero = Buffer.from([0x51, 0, 0, 0, 7, 0x41, 0x42, 0x43]);
    expect(() => readFrontendMessage(noZero)).toThrow(/no terminating zero/);
    const latin1 = Buffer.from([0x51, 0, 0, 0, 6, 0xe9, 0]);
    expect(() => readFrontendMessage(latin1)).toThrow(/UTF-8/);
    const bind = Buffer.from(serialize.bind({ values: ['abc'] }));
    bind.writeInt32BE(1000, 1 + 4 + 2 + 2 + 2 + 2); // the parameter's length, past the message's end
    expect(() => readFrontendMessage(bind)).toThrow(MalformedMessage);
    const execute = Buffer.from(serialize.execute({ portal: '', rows: 0 }));
    expect(() =>
      readFrontendMessage(Buffer.concat([execute.subarray(0, 1), Buffer.from([0, 0, 0, 6]), Buffer.from([0, 0])])),
    ).toThrow(MalformedMessage);
  });
});

describe('a statement with its values', () => {
  it('puts each value where the grammar has $n, quoted, cast to a declared type, never inside a string', async () => {
    const sql = "DELETE FROM t WHERE id = $1 AND note <> '$1' AND tag = $2 AND x IS NOT DISTINCT FROM $3";
    const bound = await bindSql(sql, {
      values: [Buffer.from('7'), Buffer.from("o'clock"), null],
      formats: [],
      typeNames: ['integer', undefined, undefined],
    });
    expect(bound).toBe(
      "DELETE FROM t WHERE id = '7'::integer AND note <> '$1' AND tag = 'o''clock' AND x IS NOT DISTINCT FROM NULL",
    );
    expect(await nullBoundSql('SELECT $1, $2', ['text'])).toBe('SELECT NULL::text, NULL');
  });

  it("the fast path's look-ups answer only what the judged path answered before, for the same text and types", async () => {
    const sql = 'SELECT $1 AS known_before';
    expect(knownNullBoundSql(sql, [0])).toBeUndefined();
    expect(await nullBoundSql(sql, [undefined])).toBe('SELECT NULL AS known_before');
    expect(knownNullBoundSql(sql, [0])).toBe('SELECT NULL AS known_before');
    // Other declared types are another text; a type never named (created in the database) is asked each time.
    expect(knownNullBoundSql(sql, [0, 0])).toBeUndefined();
    expect(knownNullBoundSql(sql, [99_999])).toBeUndefined();
    expect(knownTransactionControlOf('COMMIT; SELECT 1')).toBeUndefined();
    expect(await transactionControlOf('COMMIT; SELECT 1')).toEqual(['commit']);
    expect(knownTransactionControlOf('COMMIT; SELECT 1')).toEqual(['commit']);
  });

  it('refuses binary values and a missing value instead of guessing', async () => {
    await expect(
      bindSql('SELECT $1', { values: [Buffer.from([0, 0, 0, 1])], formats: [1], typeNames: [] }),
    ).rejects.toThrow(/binary/);
    await expect(bindSql('SELECT $2', { values: [Buffer.from('1')], formats: [], typeNames: [] })).rejects.toThrow(
      /\$2 has no value/,
    );
  });
});

describe('what the upstream still owes', () => {
  it('settles on the answers that end each message, and an error skips to the next Sync', async () => {
    const pending = new PendingResponses();
    for (const awaited of ['parse', 'bind', 'execute', 'sync'] as const) pending.expect(awaited);
    let settled = false;
    void pending.settled().then(() => (settled = true));
    pending.observe({ name: 'parseComplete', length: 4 });
    pending.observe({ name: 'error', length: 20 });
    expect(pending.size).toBe(1);
    pending.observe({ name: 'readyForQuery', length: 5 });
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it('keeps a simple Query open through its errors until ReadyForQuery', () => {
    const pending = new PendingResponses();
    pending.expect('query');
    pending.observe({ name: 'error', length: 20 });
    expect(pending.size).toBe(1);
    pending.observe({ name: 'readyForQuery', length: 5 });
    expect(pending.size).toBe(0);
  });
});

describe('start-up parameters', () => {
  it('forwards output settings, and refuses options, search_path, replication and another database', () => {
    expect(
      checkStartup(
        { user: 'a', database: 'shop', application_name: 'psql', client_encoding: 'UTF8', DateStyle: 'ISO, MDY' },
        'shop',
      ),
    ).toEqual({ application_name: 'psql', DateStyle: 'ISO, MDY' });
    const bads: Record<string, string>[] = [
      { options: '-c search_path=evil' },
      { search_path: 'evil' },
      { replication: 'database' },
      { database: 'other' },
      { client_encoding: 'LATIN1' },
      { DateStyle: 'ISO -c x=y\\' },
    ];
    for (const bad of bads) {
      expect(checkStartup({ user: 'a', ...bad }, 'shop')).toBeInstanceOf(BackendError);
    }
  });

  it("accepts in options only what the guard pins upstream anyway (pg-agent's own clients send it: mcp --guard)", () => {
    expect(
      checkStartup(
        { user: 'a', database: 'shop', options: '-c standard_conforming_strings=on -c client_encoding=UTF8' },
        'shop',
      ),
    ).toEqual({});
    for (const options of [
      '-c standard_conforming_strings=off',
      '-c standard_conforming_strings=on -c search_path=evil',
      '-c client_encoding=UTF8 -c',
      '--standard_conforming_strings=on',
      '-c standard_conforming_strings=on\\ -c\\ search_path=evil',
    ]) {
      expect(checkStartup({ user: 'a', options }, 'shop'), options).toBeInstanceOf(BackendError);
    }
  });
});
