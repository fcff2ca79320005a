import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WriteTicketState } from '../../../src/host/jobs/cockpit/jobWrites';
import { readJobWrites, writeFromImpactFile } from '../../../src/host/jobs/cockpit/jobWrites';
import { impactView } from '../../support/impactReports';

const impact = impactView({
  estimatedRows: 3,
  exactRows: 3,
  previewMs: 12,
  tables: [{ schema: 'public', name: 'products', via: 'direct', inserted: 0, updated: 3, deleted: 0 }],
});
const file = (n: number, extra: object = {}) =>
  JSON.stringify(
    {
      ticket: `tkt_${String.fromCharCode(97 + n).repeat(20)}`,
      sql: `UPDATE products SET stock_quantity = ${n}`,
      sqlFile: `sql/00${n}-restock.sql`,
      todo: 'restock',
      ...impact,
      ...extra,
    },
    null,
    2,
  );

describe('writeFromImpactFile', () => {
  it('is the held write with its impact, and its ticket as the store has it now', () => {
    const executed: WriteTicketState = { status: 'EXECUTED', decisions: [{ by: 'alice', approve: true }] };
    expect(writeFromImpactFile(file(1), executed)).toEqual({
      ticketId: 'tkt_bbbbbbbbbbbbbbbbbbbb',
      sql: 'UPDATE products SET stock_quantity = 1',
      sqlFile: 'sql/001-restock.sql',
      todoId: 'restock',
      status: 'executed',
      impact,
      decisions: [{ by: 'alice', approve: true, signed: false }],
    });
    expect(writeFromImpactFile(file(1), { status: 'EXPIRED', decisions: [] })?.status).toBe('rejected');
    expect(writeFromImpactFile(file(1), { status: 'APPROVED', decisions: [] })?.status).toBe('running');
    // A ticket the store no longer has waits for nobody.
    expect(writeFromImpactFile(file(1), undefined)?.status).toBe('rejected');
  });

  it('skips what is not a held write: a torn file, another shape, a report without risk', () => {
    expect(writeFromImpactFile('{"ticket": "tkt_', undefined)).toBeUndefined();
    expect(writeFromImpactFile('[1, 2]', undefined)).toBeUndefined();
    expect(writeFromImpactFile(JSON.stringify({ ticket: 'tkt_x', sql: 'x' }), undefined)).toBeUndefined();
    expect(writeFromImpactFile(file(1, { risk: 'NONE' }), undefined)).toBeUndefined();
  });
});

describe('readJobWrites', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists the job's impact files newest first, each with its ticket's state; none for a job without writes", async () => {
    dir = mkdtempSync(join(tmpdir(), 'pgagent-jobwrites-'));
    expect(await readJobWrites(dir, () => Promise.resolve(undefined))).toEqual([]);
    mkdirSync(join(dir, 'impact'));
    writeFileSync(join(dir, 'impact', '001.json'), file(1));
    writeFileSync(join(dir, 'impact', '002.json'), file(2));
    writeFileSync(join(dir, 'impact', '003.json'), '{ torn');
    writeFileSync(join(dir, 'impact', 'notes.txt'), 'not an impact file');
    const states: Record<string, WriteTicketState> = {
      tkt_bbbbbbbbbbbbbbbbbbbb: { status: 'REJECTED', decisions: [{ by: 'bob', approve: false }] },
      tkt_cccccccccccccccccccc: { status: 'PENDING_APPROVAL', decisions: [] },
    };
    const asked: string[] = [];
    const writes = await readJobWrites(dir, (id) => {
      asked.push(id);
      return Promise.resolve(states[id]);
    });
    expect(writes.map((w) => [w.sqlFile, w.status])).toEqual([
      ['sql/002-restock.sql', 'pending'],
      ['sql/001-restock.sql', 'rejected'],
    ]);
    expect(asked).toEqual(['tkt_cccccccccccccccccccc', 'tkt_bbbbbbbbbbbbbbbbbbbb']);
  });
});
