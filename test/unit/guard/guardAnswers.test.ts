/**
 * The guard's typed answers: `pg-agent mcp --guard` reads a held statement's ticket from the PA001 fields, never
 * from the message a person reads. A server speaking the guard's wire answers (the guard's own encoder) to the
 * real `pg` client: its message names one ticket, its fields another, and the fields win.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { heldError, refusedError } from '../../../src/guard/hold/heldMessages';
import { errorResponse, readyForQuery } from '../../../src/guard/wire/backendMessages';
import type { ErrorFields } from '../../../src/guard/wire/backendMessages';
import { sendThroughGuard } from '../../../src/mcp/guardMode/guardStatement';
import type { Ticket } from '../../../src/core/approvals/ticket';
import { detailForPeople, guardFieldsLine, readGuardFields } from '../../../src/shared/guardAnswers';

const REAL = 'tkt_abcdefghijklmnopqrst';
const NAMED = 'tkt_zzzzzzzzzzzzzzzzzzzz';

const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** Answers every simple query with `answer`, after a trust start-up (AuthenticationOk, ReadyForQuery). */
async function answering(answer: ErrorFields): Promise<string> {
  const server = net.createServer((socket) => {
    let started = false;
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 4) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          buffered = buffered.subarray(length);
          started = true;
          socket.write(Buffer.concat([Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]), readyForQuery('I')]));
          continue;
        }
        if (buffered.length < 5) return;
        const type = buffered[0];
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        buffered = buffered.subarray(length + 1);
        if (type === 0x51) socket.write(Buffer.concat([errorResponse(answer), readyForQuery('I')]));
        if (type === 0x58) socket.end();
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as net.AddressInfo;
  return `postgresql://guard@127.0.0.1:${port}/db`;
}

const ticket = {
  id: REAL,
  impact: { risk: 'HIGH', exactRows: 3, tables: [], warnings: [], wouldFail: null },
} as unknown as Ticket;

describe("the guard's typed answers", () => {
  it('reads the held ticket from the PA001 fields, not from the message text', async () => {
    const fields = heldError(ticket, false);
    // The words name another ticket (and another risk): only the fields say which ticket holds the statement.
    const url = await answering({ ...fields, message: `held for approval: ticket ${NAMED} (risk LOW, 1 row(s))` });
    const answer = await sendThroughGuard({ url, label: 'test guard' }, 'DELETE FROM t');
    expect(answer).toMatchObject({ kind: 'held', ticket: REAL, risk: 'HIGH', reused: false });
    // The person's words come without the fields' line.
    expect(answer.kind === 'held' && answer.words.detail).toBeFalsy();
  });

  it('a PA001 without fields is not taken for a held ticket', async () => {
    const url = await answering({ code: 'PA001', message: `held for approval: ticket ${REAL} (risk HIGH, 1 row(s))` });
    await expect(sendThroughGuard({ url, label: 'test guard' }, 'DELETE FROM t')).rejects.toThrow(/from the guard/);
  });

  it('a refusal carries its kind; malformed or forged fields are none', () => {
    expect(readGuardFields(refusedError('refused by the guard: no').detail)).toEqual({ kind: 'refused' });
    expect(
      readGuardFields(`rows\n${guardFieldsLine({ kind: 'held', ticket: REAL, risk: 'LOW', reused: true })}`),
    ).toEqual({ kind: 'held', ticket: REAL, risk: 'LOW', reused: true });
    expect(readGuardFields('pg-agent fields: {"kind":"held","ticket":"../../x","risk":"LOW","reused":false}')).toBe(
      undefined,
    );
    expect(readGuardFields('pg-agent fields: {"kind":"held","ticket"')).toBe(undefined);
    expect(readGuardFields(undefined)).toBe(undefined);
    expect(detailForPeople(`Rows per table: a.b: 1 deleted.\n${guardFieldsLine({ kind: 'refused' })}`)).toBe(
      'Rows per table: a.b: 1 deleted.',
    );
  });
});
