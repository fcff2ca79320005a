/**
 * COPY through the guard, without a server: the read a `COPY … TO STDOUT` is judged as (its query found by
 * PostgreSQL's grammar, whatever comments and literals hold parentheses), the refusal of COPY FROM STDIN
 * outside a transaction, and the relay of a measured COPY's data with its SHA-256 however the client cut it.
 */
import { createHash } from 'node:crypto';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { classifySql } from '../../../src/core/sql/classify';
import { loadParser, parseSql } from '../../../src/core/sql/parse';
import type { CopiedData } from '../../../src/guard/copy/copyIn';
import { copyFromStdinProblem, CopyInRelay, SHOWN_COPY_BYTES } from '../../../src/guard/copy/copyIn';
import { readOfCopyToStdout } from '../../../src/guard/judge/copyStatement';
import { PendingResponses } from '../../../src/guard/wire/pendingResponses';

beforeAll(() => loadParser());

const readOf = (sql: string) => readOfCopyToStdout(parseSql(sql).statements[0]!);

describe('COPY … TO STDOUT as a read', () => {
  it('reads a table alone (ONLY), its names quoted, or the query itself', () => {
    expect(readOf('COPY t TO STDOUT')).toBe('SELECT * FROM ONLY "t"');
    expect(readOf('copy app."Order" (id, "Total") to stdout with (format csv)')).toBe(
      'SELECT "id", "Total" FROM ONLY "app"."Order"',
    );
    expect(readOf('COPY (SELECT f(1) FROM t) TO STDOUT (FORMAT csv, HEADER)')).toBe('SELECT f(1) FROM t');
    expect(readOf('COPY /* ( */ ( SELECT \')\', "a)b" FROM t -- )\n) TO STDOUT')).toBe(
      'SELECT \')\', "a)b" FROM t -- )',
    );
    expect(readOf('COPY (DELETE FROM t RETURNING *) TO STDOUT')).toBe('DELETE FROM t RETURNING *');
  });

  it('is no read for COPY FROM, a server file or a PROGRAM', () => {
    for (const sql of [
      'COPY t FROM STDIN',
      "COPY t TO '/tmp/x'",
      "COPY t TO PROGRAM 'cat'",
      "COPY (SELECT 1) TO PROGRAM 'cat'",
      'SELECT 1',
    ]) {
      expect(readOf(sql)).toBeUndefined();
    }
  });
});

describe('COPY … FROM STDIN', () => {
  it('is refused outside a transaction; a COPY from a server file or TO STDOUT is not', () => {
    expect(copyFromStdinProblem(classifySql('COPY t (a) FROM STDIN WITH (FORMAT csv)'))).toMatchObject({
      code: 'PA002',
    });
    expect(copyFromStdinProblem(classifySql("COPY t FROM '/tmp/x'"))).toBeUndefined();
    expect(copyFromStdinProblem(classifySql('COPY t TO STDOUT'))).toBeUndefined();
  });

  it('relays the data only in COPY mode, with its SHA-256 whatever the message cuts, and shows it as text', () => {
    const sent: Buffer[] = [];
    const copied: CopiedData[] = [];
    const relay = new CopyInRelay(
      (bytes) => sent.push(Buffer.from(bytes)),
      (data) => copied.push(data),
    );
    relay.relay(serialize.copyData(Buffer.from('stray')), 'copyData');
    expect(sent).toEqual([]);
    const load = (parts: string[]) => {
      relay.observe([{ name: 'copyInResponse' } as BackendMessage]);
      for (const part of parts) relay.relay(serialize.copyData(Buffer.from(part)), 'copyData');
      relay.relay(serialize.copyDone(), 'copyDone');
    };
    load(['1\tone\n2\t', 'two\n']);
    load(['1\tone\n', '2\ttwo\n']);
    expect(sent).toHaveLength(6);
    const sha256 = createHash('sha256').update('1\tone\n2\ttwo\n').digest('hex');
    expect(copied.map((c) => c.sha256)).toEqual([sha256, sha256]);
    expect(copied[0]!.comment).toBe(
      `-- The COPY below reads 12 bytes of data (SHA-256 ${sha256}):\n--   1\tone\n--   2\ttwo`,
    );
    // After CopyDone the relay is out of COPY mode again.
    relay.relay(serialize.copyData(Buffer.from('late')), 'copyData');
    expect(sent).toHaveLength(6);
  });

  it('fails the COPY upstream when the client sends anything else in COPY mode (a protocol error), never twice', () => {
    const sent: Buffer[] = [];
    const relay = new CopyInRelay(
      (bytes) => sent.push(Buffer.from(bytes)),
      () => undefined,
    );
    relay.interrupt('query');
    relay.observe([{ name: 'copyInResponse' } as BackendMessage]);
    relay.interrupt('flush');
    relay.interrupt('copyData');
    expect(sent).toEqual([]);
    relay.interrupt('query');
    relay.interrupt('query');
    expect(sent).toHaveLength(1);
    expect(sent[0]![0]).toBe(0x66);
    expect(sent[0]!.toString('utf8')).toContain('the client sent a query message during COPY');
  });

  it('shows only size and hash of data too long or not text, and a line break of any kind starts a new comment line', () => {
    const copied: CopiedData[] = [];
    const relay = new CopyInRelay(
      () => undefined,
      (data) => copied.push(data),
    );
    const load = (data: Buffer) => {
      relay.observe([{ name: 'copyInResponse' } as BackendMessage]);
      relay.relay(serialize.copyData(data), 'copyData');
      relay.relay(serialize.copyDone(), 'copyDone');
    };
    load(Buffer.alloc(SHOWN_COPY_BYTES + 1, 'a'));
    load(Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]));
    load(Buffer.from('a\rDELETE FROM t;\r\nb'));
    expect(copied[0]!.comment).toMatch(/^-- The COPY below reads 65537 bytes of data \(SHA-256 [0-9a-f]{64}\)\.$/);
    expect(copied[1]!.comment).toMatch(/^[^\n]*\.$/);
    expect(copied[2]!.comment.split('\n').slice(1)).toEqual(['--   a', '--   DELETE FROM t;', '--   b']);
  });
});

describe('what the upstream owes across a COPY', () => {
  it('a COPY … TO STDOUT ends at ReadyForQuery (simple) or CommandComplete (Execute), its copy messages in between', () => {
    const copyOut = ['copyOutResponse', 'copyData', 'copyData', 'copyDone'].map((name) => ({ name }) as BackendMessage);
    const pending = new PendingResponses();
    pending.expect('query');
    for (const m of [...copyOut, { name: 'commandComplete' } as BackendMessage]) pending.observe(m);
    expect(pending.size).toBe(1);
    pending.observe({ name: 'readyForQuery' } as BackendMessage);
    expect(pending.size).toBe(0);
    pending.expect('execute');
    pending.expect('sync');
    for (const m of copyOut) pending.observe(m);
    expect(pending.size).toBe(2);
    pending.observe({ name: 'commandComplete' } as BackendMessage);
    expect(pending.size).toBe(1);
  });
});
