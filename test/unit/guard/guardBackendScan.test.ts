/**
 * The upstream's messages as the guard's hot path reads them (src/guard/wire/backendScan.ts): names and
 * ReadyForQuery's status without decoding a read's rows; errors, notifications and COPY responses decoded
 * always; every message decoded in full mode; a message cut across chunks (a byte at a time, or a wide row in
 * many pieces) read once, whole, exactly as pg-protocol's own Parser reads the same bytes.
 */
import { Writer } from 'pg-protocol/dist/buffer-writer';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';
import { describe, expect, it } from 'vitest';
import { BackendScanner } from '../../../src/guard/wire/backendScan';

const message = (code: string, build: (w: Writer) => Writer = (w) => w) =>
  build(new Writer()).flush(code.charCodeAt(0));
const rowDescription = message('T', (w) =>
  w.addInt16(1).addCString('abalance').addInt32(16384).addInt16(3).addInt32(23).addInt16(4).addInt32(-1).addInt16(0),
);
const dataRow = (value: string) =>
  message('D', (w) => w.addInt16(1).addInt32(Buffer.byteLength(value)).addString(value));
const commandComplete = message('C', (w) => w.addCString('SELECT 1'));
const ready = (status: string) => message('Z', (w) => w.add(Buffer.from(status)));
const error = message('E', (w) =>
  w
    .addString('S')
    .addCString('ERROR')
    .addString('C')
    .addCString('42P01')
    .addString('M')
    .addCString('no such table')
    .add(Buffer.from([0])),
);
const notification = message('A', (w) => w.addInt32(42).addCString('jobs').addCString('done'));
const copyIn = message('G', (w) =>
  w
    .add(Buffer.from([0]))
    .addInt16(1)
    .addInt16(0),
);
const answer = Buffer.concat([
  message('1'),
  message('2'),
  rowDescription,
  dataRow('-4711'),
  commandComplete,
  notification,
  error,
  copyIn,
  ready('T'),
]);

function parsedByPgProtocol(bytes: Buffer): BackendMessage[] {
  const out: BackendMessage[] = [];
  new Parser().parse(bytes, (m) => out.push(m));
  return out;
}

describe('BackendScanner', () => {
  it('names every message; decodes errors, notifications and COPY responses; ReadyForQuery keeps its status', () => {
    const messages = new BackendScanner().scan(answer, false);
    expect(messages.map((m) => m.name)).toEqual(parsedByPgProtocol(answer).map((m) => m.name));
    expect(messages.find((m) => m.name === 'readyForQuery')).toMatchObject({ status: 'T' });
    expect(messages.find((m) => m.name === 'error')).toMatchObject({ code: '42P01', message: 'no such table' });
    expect(messages.find((m) => m.name === 'notification')).toMatchObject({ channel: 'jobs', payload: 'done' });
    expect(messages.find((m) => m.name === 'copyInResponse')).toBeDefined();
    // A read's row is not decoded on the hot path.
    expect(messages.find((m) => m.name === 'dataRow')).not.toHaveProperty('fields');
  });

  it('in full mode, decodes every message as pg-protocol does', () => {
    expect(new BackendScanner().scan(answer, true)).toEqual(parsedByPgProtocol(answer));
  });

  it('reads messages cut across chunks, a byte at a time, once each and in order', () => {
    const scanner = new BackendScanner();
    const seen: BackendMessage[] = [];
    for (let i = 0; i < answer.length; i++) seen.push(...scanner.scan(answer.subarray(i, i + 1), true));
    expect(seen).toEqual(parsedByPgProtocol(answer));
  });

  it('joins a wide row sent in many pieces once it is whole', () => {
    const wide = Buffer.concat([dataRow('x'.repeat(300_000)), ready('I')]);
    const scanner = new BackendScanner();
    const seen: BackendMessage[] = [];
    for (let at = 0; at < wide.length; at += 16_384) seen.push(...scanner.scan(wide.subarray(at, at + 16_384), true));
    expect(seen).toEqual(parsedByPgProtocol(wide));
    expect((seen[0] as BackendMessage & { fields: string[] }).fields[0]).toHaveLength(300_000);
  });
});
