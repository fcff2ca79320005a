/**
 * Rows the guard sends itself: those an approved statement returned on the guard's executor (RETURNING),
 * as the server would have sent them to the client (RowDescription, DataRow; values in PostgreSQL's text
 * form, format code 0). Built with pg-protocol's Writer, never by hand.
 */
import { Writer } from 'pg-protocol/dist/buffer-writer';
import type { DbField } from '../../core/db/db';

/** RowDescription with every column in text format; facts the driver did not give are 0 (-1 for size and modifier). */
export function rowDescription(fields: readonly DbField[]): Buffer {
  const writer = new Writer().addInt16(fields.length);
  for (const f of fields) {
    writer
      .addCString(f.name)
      .addInt32(f.tableID ?? 0)
      .addInt16(f.columnID ?? 0)
      .addInt32(f.dataTypeID)
      .addInt16(f.dataTypeSize ?? -1)
      .addInt32(f.dataTypeModifier ?? -1)
      .addInt16(0);
  }
  return writer.flush(0x54);
}

export function dataRow(values: readonly (string | null)[]): Buffer {
  const writer = new Writer().addInt16(values.length);
  for (const value of values) {
    if (value === null) writer.addInt32(-1);
    else {
      const bytes = Buffer.from(value, 'utf8');
      writer.addInt32(bytes.length).add(bytes);
    }
  }
  return writer.flush(0x44);
}
