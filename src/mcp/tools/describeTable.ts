/** `describe_table(table)`: one table's columns, keys, indexes and triggers, as `pg-agent schema --table T --json`. */
import { z } from 'zod';
import { describedTable, findTable } from '../../core/jobs/phases/readTools';
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import type { McpToolContext } from '../toolContext';
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
    // The same JSON as `pg-agent schema --table <name> --json`.
    const snapshot = (await oneTable(context, table)) ?? (await wholeSchema(context, table));
    const found = snapshot.tables[0] as TableInfo; // one table, always (findTable throws on a miss)
    return {
      structured: { ...snapshot },
      text: schemaForModel(`Table ${found.schema}.${found.name}:`, describedTable(found)),
    };
  },
});

/** "schema.name", or "name" in public: read alone (index + that table's bytes). Undefined: not found that way. */
async function oneTable(context: McpToolContext, table: string): Promise<SchemaSnapshot | undefined> {
  if (!context.loadTable) return undefined;
  const plain = table.trim().replaceAll('"', '');
  const dot = plain.indexOf('.');
  const [schema, name] = dot > 0 ? [plain.slice(0, dot), plain.slice(dot + 1)] : ['public', plain];
  const snapshot = await context.loadTable(schema, name);
  return snapshot.tables.length > 0 ? snapshot : undefined;
}

/** Any other spelling ("Orders", a name outside public): matched over the whole schema, near names on a miss. */
async function wholeSchema(context: McpToolContext, table: string): Promise<SchemaSnapshot> {
  const found = await findTable(await readToolContext(context), table);
  return { ...(await context.loadSchema()), tables: [found] };
}
