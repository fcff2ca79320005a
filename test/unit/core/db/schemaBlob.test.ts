// A schema's blob keeps a column list several tables share once (in its directory): decoding gives back every
// table as it was, the tables that share a list sharing one frozen list (a write to it throws instead of
// reaching the other tables), and one table read by its byte range is the same table.
import { describe, expect, it } from 'vitest';
import { bodyStart, decodeSchema, decodeTable, encodeSchema, tableRange } from '../../../../src/core/db/schemaBlob';
import type { BlobDirectory } from '../../../../src/core/db/schemaBlob';
import { ownColumns } from '../../../../src/core/db/sharedColumns';
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
    // One frozen list for both tables: a change meant for one table cannot reach the other.
    const [orders, invoices] = decoded;
    expect(orders?.columns).toBe(invoices?.columns);
    const status = orders?.columns[1];
    if (!status) throw new Error('no status column');
    expect(() => (status.comment = 'changed')).toThrow(TypeError);
    expect(() => status.allowedValues?.push('late')).toThrow(TypeError);
    expect(() => orders?.columns.push(status)).toThrow(TypeError);
    expect(invoices?.columns[1]?.comment).toBe('state');
  });

  it('gives a table its own copy of a shared list to change (ownColumns), the others keep theirs', () => {
    const decoded = decodeSchema('tenant_1', blob);
    const [orders, invoices] = decoded;
    if (!orders || !invoices) throw new Error('no tables');
    ownColumns(orders)[1]!.valueWords = ['late'];
    expect(orders.columns[1]?.valueWords).toEqual(['late']);
    expect(invoices.columns[1]?.valueWords).toEqual(['new']);
    expect(JSON.stringify(invoices)).toBe(JSON.stringify(tables[1]));
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
