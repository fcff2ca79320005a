// A schema's blob keeps a column list several tables share once (in its directory): decoding gives back every
// table as it was, each with columns of its own, and one table read by its byte range is the same table.
import { describe, expect, it } from 'vitest';
import { bodyStart, decodeSchema, decodeTable, encodeSchema, tableRange } from '../../../../src/core/db/schemaBlob';
import type { BlobDirectory } from '../../../../src/core/db/schemaBlob';
import type { ColumnInfo, TableInfo } from '../../../../src/shared/schema';

const columns = (): ColumnInfo[] => [
  { name: 'id', type: 'integer', nullable: false, default: null, comment: null },
  {
    name: 'status',
    type: 'text',
    nullable: true,
    default: "'new'::text",
    comment: 'state',
    allowedValues: ['new', 'paid'],
    valueWords: ['new'],
  },
];

const table = (name: string, own: ColumnInfo[]): TableInfo => ({
  schema: 'tenant_1',
  name,
  kind: 'table',
  comment: null,
  rowEstimate: 10,
  columns: own,
  primaryKey: ['id'],
  uniqueConstraints: [],
  foreignKeys: [],
  indexes: [
    {
      name: `${name}_pkey`,
      unique: true,
      primary: true,
      definition: `CREATE UNIQUE INDEX ${name}_pkey ON tenant_1.${name} USING btree (id)`,
    },
  ],
  triggers: [],
});

describe('schema blob', () => {
  const tables = [
    table('orders', columns()),
    table('invoices', columns()),
    table('odd', [{ name: 'x', type: 'numeric(10,2)', nullable: true, default: null, comment: null }]),
  ];
  const blob = encodeSchema('tenant_1', tables);
  const directory = JSON.parse(blob.subarray(4, bodyStart(blob.readUInt32LE(0))).toString('utf8')) as BlobDirectory;

  it('keeps a shared column list once, and decodes every table as it was', () => {
    expect(directory.c).toHaveLength(1);
    expect(blob.toString('utf8').split('"status"')).toHaveLength(2);
    const decoded = decodeSchema('tenant_1', blob);
    expect(decoded).toEqual(tables);
    // Each table has columns of its own: a change to one is not a change to the other.
    expect(decoded[0]?.columns[1]).not.toBe(decoded[1]?.columns[1]);
    expect(decoded[0]?.columns[1]?.allowedValues).not.toBe(decoded[1]?.columns[1]?.allowedValues);
  });

  it('reads one table by its byte range, a shared list or its own', () => {
    const body = bodyStart(blob.readUInt32LE(0));
    for (const t of tables) {
      const range = tableRange(directory, t.name);
      if (!range) throw new Error(`no ${t.name}`);
      expect(decodeTable('tenant_1', blob.subarray(body + range.start, body + range.end), directory)).toEqual(t);
    }
  });
});
