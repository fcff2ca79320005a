/** `list_tables`: the tables and views of the database, with kind, row estimate and column count. */
import { z } from 'zod';
import { listTables } from '../../core/jobs/phases/readTools';
import { readToolContext, schemaForModel } from '../readToolContext';
import { defineTool, READ_HINTS } from '../toolSpec';

export const listTablesTool = defineTool({
  name: 'list_tables',
  title: 'List tables',
  description:
    'Lists the tables and views of the database (schema.name, kind, estimated rows, number of columns, comment). ' +
    'Reads the catalog only. Call describe_table for columns and keys, or schema_context to find the tables a question needs.',
  annotations: READ_HINTS,
  input: {},
  output: {
    database: z.string(),
    tables: z.array(
      z.looseObject({ table: z.string(), kind: z.string(), rowEstimate: z.number().nullable(), columns: z.number() }),
    ),
    note: z.string().optional(),
  },
  async run(context) {
    const structured = (await listTables(await readToolContext(context))) as Record<string, unknown>;
    return { structured, text: schemaForModel('Tables and views of the database:', structured) };
  },
});
