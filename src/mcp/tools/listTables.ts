/** `list_tables`: the tables and views of the database, with kind, row estimate and column count, a page at a time. */
import { z } from 'zod';
import { DEFAULT_PAGE, MAX_PAGE, tablePage } from '../../core/db/tablePage';
import { schemaForModel } from '../readToolContext';
import { defineTool, READ_HINTS } from '../toolSpec';

export const listTablesTool = defineTool({
  name: 'list_tables',
  title: 'List tables',
  description:
    'Lists the tables and views of the database (schema.name, kind, estimated rows, number of columns, comment), ' +
    `${DEFAULT_PAGE} at a time in schema and name order: pass nextCursor back as cursor for the next page, or schema for one schema. ` +
    'Reads the catalog only. Call describe_table for columns and keys, or schema_context to find the tables a question needs.',
  annotations: READ_HINTS,
  input: {
    schema: z.string().min(1).max(200).optional().describe('Only this schema ("public").'),
    cursor: z.string().min(1).max(2000).optional().describe('The nextCursor of the previous page.'),
    limit: z.number().int().min(1).max(MAX_PAGE).optional().describe(`Tables per page (default ${DEFAULT_PAGE}).`),
  },
  output: {
    database: z.string(),
    tables: z.array(
      z.looseObject({ table: z.string(), kind: z.string(), rowEstimate: z.number().nullable(), columns: z.number() }),
    ),
    total: z.number(),
    nextCursor: z.string().optional(),
    note: z.string().optional(),
  },
  async run(context, { schema, cursor, limit }) {
    const snapshot = await context.loadSchema();
    const page = tablePage(snapshot, {
      ...(schema !== undefined ? { schema } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    const structured = {
      database: snapshot.database,
      tables: page.tables.map((t) => ({
        table: `${t.schema}.${t.name}`,
        kind: t.kind,
        rowEstimate: t.rowEstimate,
        columns: t.columns.length,
        ...(t.comment ? { comment: t.comment } : {}),
      })),
      total: page.total,
      ...(page.nextCursor !== undefined
        ? {
            nextCursor: page.nextCursor,
            note: `${page.total} tables; this page lists ${page.tables.length}: call again with cursor for the next.`,
          }
        : {}),
    };
    return { structured, text: schemaForModel('Tables and views of the database:', structured) };
  },
});
