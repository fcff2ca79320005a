/** `pg-agent schema`: the structure of the database, summarised for a person or as JSON. */
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import type { Db } from '../../core/db/db';
import { columns, formatCount, plural } from '../../core/present/format';
import { diagramMermaid } from '../../core/present/diagramMermaid';
import { diagramSchemas, neighbourhoodGraph, schemaGraph } from '../../core/db/schemaGraph';

export const schemaCommand: CliCommand = {
  name: 'schema',
  summary: 'tables, columns, keys, indexes and row estimates of the database',
  usage: 'pg-agent schema [--compact] [--table NAME] [--diagram mermaid [--depth 1|2] [--schema NAME]] [flags]',
  options: {
    compact: { type: 'boolean' },
    table: { type: 'string' },
    samples: { type: 'boolean' },
    diagram: { type: 'string' },
    depth: { type: 'string' },
    schema: { type: 'string' },
  },
  optionsHelp: `  --compact           one line per table
  --table NAME        only this table (name or schema.name)
  --samples           a few common values per column (from pg_stats; shows data)
  --diagram mermaid   a Mermaid ER diagram: --table's foreign-key neighbourhood, else one schema
  --depth 1|2         with --diagram --table: foreign keys away from the table (default 1)
  --schema NAME       with --diagram: the schema drawn (default public, else the first)`,
  async run({ args, io, openDb, loadSchema, loadTable }) {
    const db = await openDb();
    const diagram = args.options.diagram;
    if (diagram !== undefined && diagram !== 'mermaid') {
      io.stderr(`--diagram takes "mermaid" (got "${String(diagram)}").\n`);
      return EXIT.badInput;
    }
    const depth = args.options.depth;
    if (depth !== undefined && depth !== '1' && depth !== '2') {
      io.stderr(`--depth takes 1 or 2 (got "${String(depth)}").\n`);
      return EXIT.badInput;
    }
    const only = args.options.table;
    const sampleValues = args.options.samples === true;
    // "schema.name" is read alone from the cache (its index and that table's bytes); a bare name is looked for
    // everywhere, and a diagram needs the table's neighbours too.
    const qualified = typeof only === 'string' && diagram === undefined ? /^([^.]+)\.([^.]+)$/.exec(only) : null;
    const snapshot =
      qualified?.[1] && qualified[2]
        ? await loadTable(qualified[1], qualified[2], { sampleValues })
        : await loadSchema({ sampleValues });
    const tables = typeof only === 'string' ? snapshot.tables.filter((t) => matches(t, only)) : snapshot.tables;
    if (typeof only === 'string' && tables.length === 0) {
      io.stderr(`No table or view named "${only}" in ${db.label}.\n`);
      return EXIT.failed;
    }
    if (diagram === 'mermaid') {
      const focus = typeof only === 'string' ? tables[0] : undefined;
      const schemas = diagramSchemas(snapshot);
      const schema = typeof args.options.schema === 'string' ? args.options.schema : schemas[0];
      if (!focus && (schema === undefined || !schemas.includes(schema))) {
        io.stderr(`No schema "${String(schema)}" with tables in ${db.label} (there are: ${schemas.join(', ')}).\n`);
        return EXIT.failed;
      }
      const graph = focus
        ? neighbourhoodGraph(snapshot, focus.schema, focus.name, depth === '2' ? 2 : 1)
        : schemaGraph(snapshot, schema ?? 'public');
      io.stdout(diagramMermaid(graph));
      return EXIT.ok;
    }
    // Views and tables an extension made (pg_stat_statements, hypopg_list_indexes) are not the user's: apart.
    const owned = await extensionOwned(db);
    if (args.flags.json) {
      const extensionOwnedJson = tables
        .filter((t) => owned.has(`${t.schema}.${t.name}`))
        .map((t) => ({ schema: t.schema, name: t.name, extension: owned.get(`${t.schema}.${t.name}`) }));
      // Only when there are any: the JSON stays the shape MCP's describe_table returns for a user's table.
      const extra = extensionOwnedJson.length > 0 ? { extensionOwned: extensionOwnedJson } : {};
      io.stdout(`${JSON.stringify({ ...snapshot, tables, ...extra }, null, 2)}\n`);
      return EXIT.ok;
    }
    io.stdout(`${renderSchema({ ...snapshot, tables }, db.label, args.options.compact === true, owned)}\n`);
    return EXIT.ok;
  },
};

function matches(table: TableInfo, name: string): boolean {
  return name === table.name || name === `${table.schema}.${table.name}`;
}

/** schema.name → extension, for every table or view an extension owns (pg_depend 'e'). */
async function extensionOwned(db: Db): Promise<Map<string, string>> {
  const rows = await db
    .withSession(async (session) => {
      const result = await session.query<{ schema: string; name: string; extension: string }>(
        `SELECT n.nspname AS schema, c.relname AS name, e.extname AS extension
           FROM pg_depend d
           JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
           JOIN pg_class c ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE d.deptype = 'e'`,
      );
      return result.rows;
    })
    .catch(() => []);
  return new Map(rows.map((r) => [`${r.schema}.${r.name}`, r.extension]));
}

export function renderSchema(
  snapshot: SchemaSnapshot,
  label: string,
  compact: boolean,
  owned: ReadonlyMap<string, string> = new Map(),
): string {
  const all = snapshot.tables;
  const relations = all.filter((t) => !owned.has(`${t.schema}.${t.name}`));
  const apart = all.filter((t) => owned.has(`${t.schema}.${t.name}`));
  const extensions =
    apart.length === 0
      ? ''
      : `\n\nMade by extensions (not your tables): ${apart.map((t) => `${t.schema}.${t.name} (${kindLabel(t)}, ${owned.get(`${t.schema}.${t.name}`) ?? '?'})`).join(', ')}`;
  return renderRelations(snapshot, relations, label, compact) + extensions;
}

function renderRelations(
  snapshot: SchemaSnapshot,
  relations: readonly TableInfo[],
  label: string,
  compact: boolean,
): string {
  const tableCount = relations.filter((t) => t.kind === 'table' || t.kind === 'partitioned_table').length;
  const viewCount = relations.length - tableCount;
  const header =
    `${label} · database ${snapshot.database} · PostgreSQL ${snapshot.serverVersion}\n` +
    `${plural(tableCount, 'table')}, ${plural(viewCount, 'view')}`;
  if (relations.length === 0) return `${header}\n(no tables in user schemas)`;
  if (compact) return `${header}\n\n${columns(relations.map(summaryRow))}`;
  return [header, ...relations.map(renderTable)].join('\n\n');
}

function summaryRow(t: TableInfo): string[] {
  const rows = t.rowEstimate === null ? '' : `~${formatCount(t.rowEstimate)} rows`;
  const facts = [
    plural(t.columns.length, 'column'),
    t.foreignKeys.length > 0 ? `→ ${t.foreignKeys.map((fk) => fk.references.table).join(', ')}` : '',
    t.triggers.length > 0 ? plural(t.triggers.length, 'trigger') : '',
  ].filter((s) => s !== '');
  return [`${t.schema}.${t.name}`, kindLabel(t), rows, facts.join(' · ')];
}

function kindLabel(t: TableInfo): string {
  return t.kind.replace('_', ' ');
}

function renderTable(t: TableInfo): string {
  const [name, kind, rows] = summaryRow(t);
  const lines = [[name, kind, rows, t.comment ?? ''].filter((s) => s !== '').join('  ')];
  const pk = new Set(t.primaryKey ?? []);
  const unique = new Set(t.uniqueConstraints.filter((u) => u.length === 1).map((u) => u[0]));
  lines.push(
    columns(
      t.columns.map((c) => [
        c.name,
        c.type,
        c.nullable ? 'null' : 'not null',
        [
          pk.has(c.name) ? 'PK' : '',
          unique.has(c.name) ? 'unique' : '',
          c.default ? `default ${c.default}` : '',
          c.comment ? `— ${c.comment}` : '',
          c.samples?.length ? `e.g. ${c.samples.join(', ')}` : '',
        ]
          .filter((s) => s !== '')
          .join(' '),
      ]),
      '  ',
    ),
  );
  for (const fk of t.foreignKeys) {
    const actions = [
      fk.onDelete !== 'NO ACTION' ? `ON DELETE ${fk.onDelete}` : '',
      fk.onUpdate !== 'NO ACTION' ? `ON UPDATE ${fk.onUpdate}` : '',
    ]
      .filter((s) => s !== '')
      .join(' ');
    lines.push(
      `  FK (${fk.columns.join(', ')}) → ${fk.references.schema}.${fk.references.table}(${fk.references.columns.join(', ')})${actions ? ` ${actions}` : ''}`,
    );
  }
  for (const u of t.uniqueConstraints.filter((c) => c.length > 1)) lines.push(`  UNIQUE (${u.join(', ')})`);
  if (t.indexes.length > 0) {
    lines.push(
      `  indexes: ${t.indexes.map((i) => (i.primary ? `${i.name} (primary)` : i.unique ? `${i.name} (unique)` : i.name)).join(', ')}`,
    );
  }
  if (t.triggers.length > 0) {
    lines.push(`  triggers: ${t.triggers.map((tr) => (tr.enabled ? tr.name : `${tr.name} (disabled)`)).join(', ')}`);
  }
  return lines.join('\n');
}
