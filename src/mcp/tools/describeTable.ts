/** `describe_table(table)`: one table's columns, keys, indexes and triggers, as `pg-agent schema --table T --json`. */
import { z } from 'zod';
import { describeTable, findTable } from '../../core/jobs/phases/readTools';
import { readToolContext, schemaForModel } from '../readToolContext';
import { defineTool, READ_HINTS } from '../toolSpec';

export const describeTableTool = defineTool({
  name: 'describe_table',
  title: 'Describe a table',
  description:
    'Columns (type, nullability, default, comment), primary key, foreign keys both ways, indexes and triggers of one table or view. ' +
    '`table` is "name" or "schema.name". Reads the catalog only.',
  annotations: READ_HINTS,
  input: { table: z.string().min(1).max(200).describe('Table or view name: "orders" or "public.orders".') },
  output: {
    database: z.string(),
    serverVersion: z.string(),
    tables: z.array(
      z.looseObject({
        schema: z.string(),
        name: z.string(),
        kind: z.string(),
        columns: z.array(z.looseObject({ name: z.string(), type: z.string() })),
      }),
    ),
  },
  async run(context, { table }) {
    const read = await readToolContext(context);
    const found = await findTable(read, table);
    const snapshot = await context.loadSchema();
    // The same JSON as `pg-agent schema --table <name> --json`.
    const structured = { ...snapshot, tables: [found] };
    return {
      structured,
      text: schemaForModel(`Table ${found.schema}.${found.name}:`, await describeTable(read, table)),
    };
  },
});
