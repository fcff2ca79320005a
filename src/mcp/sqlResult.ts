/** The `pg-agent sql --json` shape of a read, shared by run_read and explain, and its output schema. */
import { z } from 'zod';
import type { Classification } from '../core/sql/classification';
import type { ReadResult } from '../core/sql/runRead';
import { statementsJson } from '../core/present/outputJson';

export const READ_OUTPUT = {
  status: z.literal('executed'),
  statements: z.array(z.looseObject({ sql: z.string(), kind: z.string(), class: z.string(), decision: z.string() })),
  fields: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.array(z.unknown())),
  rowCount: z.number(),
  truncated: z.boolean(),
};

export function readJson(
  classification: Classification,
  result: Pick<ReadResult, 'fields' | 'rows' | 'rowCount' | 'truncated'>,
): Record<string, unknown> {
  return {
    status: 'executed',
    statements: statementsJson(classification),
    fields: result.fields,
    rows: result.rows,
    rowCount: result.rowCount,
    truncated: result.truncated,
  };
}
