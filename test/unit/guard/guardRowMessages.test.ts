/**
 * The rows the guard sends itself (an approved statement's RETURNING rows): read back by pg-protocol's
 * Parser (node-postgres' own), they are the columns and values given, NULL and multi-byte text included,
 * and when a Bind asked for binary results.
 */
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';
import { describe, expect, it } from 'vitest';
import { asksBinary } from '../../../src/guard/hold/heldPortal';
import { dataRow, rowDescription } from '../../../src/guard/wire/rowMessages';

function parse(bytes: Buffer): BackendMessage[] {
  const messages: BackendMessage[] = [];
  new Parser().parse(bytes, (m) => messages.push(m));
  return messages;
}

describe('rows the guard sends', () => {
  it('writes RowDescription and DataRow as node-postgres reads them', () => {
    const [description, row] = parse(
      Buffer.concat([
        rowDescription([
          { name: 'id', dataTypeID: 23, tableID: 16384, columnID: 1, dataTypeSize: 4, dataTypeModifier: -1 },
          { name: 'v', dataTypeID: 25 },
        ]),
        dataRow(['42', null]),
      ]),
    ) as [
      BackendMessage & {
        fields: {
          name: string;
          tableID: number;
          columnID: number;
          dataTypeID: number;
          dataTypeSize: number;
          format: string;
        }[];
      },
      BackendMessage & { fields: unknown[] },
    ];
    expect(description.name).toBe('rowDescription');
    expect(
      description.fields.map((f) => [f.name, f.tableID, f.columnID, f.dataTypeID, f.dataTypeSize, f.format]),
    ).toEqual([
      ['id', 16384, 1, 23, 4, 'text'],
      ['v', 0, 0, 25, -1, 'text'],
    ]);
    expect(row).toMatchObject({ name: 'dataRow', fields: ['42', null] });
    const [utf8] = parse(dataRow(['ünïcödé ✓', ''])) as [BackendMessage & { fields: unknown[] }];
    expect(utf8.fields).toEqual(['ünïcödé ✓', '']);
  });

  it('knows when Bind asked for binary results', () => {
    expect(asksBinary([])).toBe(false);
    expect(asksBinary([0, 0])).toBe(false);
    expect(asksBinary([1])).toBe(true);
    expect(asksBinary([0, 1])).toBe(true);
  });
});
