/**
 * "Show DDL" of the schema explorer: a table's CREATE TABLE rebuilt from the catalog snapshot the whole
 * product shares (no query of its own): columns with types, defaults and NOT NULL, the primary key and
 * unique constraints, then what needs other tables or the table itself to exist — foreign keys, indexes
 * that are not a constraint's own, triggers, comments. Views and foreign tables are not rebuilt (the
 * snapshot does not keep their definitions): they get a note instead. Not in the snapshot either, so not
 * in the text: CHECK constraints, identity columns (shown as their type), partitioning, ownership, grants.
 */
import type { IndexInfo, TableInfo } from '../../shared/schema';
import { qualifiedName, quoteIdent } from '../../shared/sqlNames';

export interface TableDdl {
  /** CREATE TABLE with its columns, primary key and unique constraints. */
  create: string;
  /** Statements that come after every table exists: foreign keys, indexes, triggers, comments. */
  after: string[];
}

const SERIAL: Partial<Record<string, string>> = { integer: 'serial', bigint: 'bigserial', smallint: 'smallserial' };
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const columnList = (names: readonly string[]) => names.map(quoteIdent).join(', ');

/** The columns an index covers, when it is a plain column list ("... USING btree (a, b)"). */
function indexColumns(index: IndexInfo): string[] | undefined {
  const match = /\(([^()]*)\)\s*$/.exec(index.definition);
  if (!match?.[1]) return undefined;
  return match[1].split(',').map((part) => part.trim().replace(/^"(.*)"$/, '$1'));
}

export function tableDdl(table: TableInfo): TableDdl | undefined {
  if (table.kind !== 'table' && table.kind !== 'partitioned_table') return undefined;
  const name = qualifiedName(table.schema, table.name);
  const lines = table.columns.map((c) => {
    // A column whose default is its own sequence's nextval() is written the way people write it: serial.
    const serial = c.default !== null && /^nextval\('[^']+'::regclass\)$/.test(c.default) ? SERIAL[c.type] : undefined;
    const type = serial ?? c.type;
    const def = serial === undefined && c.default !== null ? ` DEFAULT ${c.default}` : '';
    return `  ${quoteIdent(c.name)} ${type}${def}${c.nullable ? '' : ' NOT NULL'}`;
  });
  if (table.primaryKey && table.primaryKey.length > 0) lines.push(`  PRIMARY KEY (${columnList(table.primaryKey)})`);
  for (const unique of table.uniqueConstraints) lines.push(`  UNIQUE (${columnList(unique)})`);
  const create = `CREATE TABLE ${name} (\n${lines.join(',\n')}\n);`;

  const after: string[] = [];
  for (const fk of table.foreignKeys) {
    const target = qualifiedName(fk.references.schema, fk.references.table);
    const actions = `${fk.onDelete !== 'NO ACTION' ? ` ON DELETE ${fk.onDelete}` : ''}${fk.onUpdate !== 'NO ACTION' ? ` ON UPDATE ${fk.onUpdate}` : ''}`;
    after.push(
      `ALTER TABLE ${name} ADD CONSTRAINT ${quoteIdent(fk.name)} FOREIGN KEY (${columnList(fk.columns)}) REFERENCES ${target} (${columnList(fk.references.columns)})${actions};`,
    );
  }
  // The primary key's and unique constraints' own indexes come with them; the others are stated.
  const constraintColumns = [table.primaryKey ?? [], ...table.uniqueConstraints].map((cols) => cols.join('\u0000'));
  for (const index of table.indexes) {
    if (index.primary) continue;
    const columns = indexColumns(index);
    if (index.unique && columns && constraintColumns.includes(columns.join('\u0000'))) continue;
    after.push(`${index.definition};`);
  }
  for (const trigger of table.triggers) {
    after.push(`${trigger.definition};`);
    if (!trigger.enabled) after.push(`ALTER TABLE ${name} DISABLE TRIGGER ${quoteIdent(trigger.name)};`);
  }
  if (table.comment) after.push(`COMMENT ON TABLE ${name} IS ${literal(table.comment)};`);
  for (const column of table.columns) {
    if (column.comment)
      after.push(`COMMENT ON COLUMN ${name}.${quoteIdent(column.name)} IS ${literal(column.comment)};`);
  }
  return { create, after };
}

/** The text Show DDL opens: the table's statements, or a note for what the snapshot cannot rebuild. */
export function tableDdlText(table: TableInfo): string {
  const ddl = tableDdl(table);
  const name = qualifiedName(table.schema, table.name);
  if (!ddl)
    return `-- ${name} is a ${table.kind.replace('_', ' ')}: its definition is not rebuilt here.\n-- In psql: \\d+ ${name}\n`;
  const estimate = table.rowEstimate !== null ? `, ~${Math.round(table.rowEstimate)} rows` : '';
  return `-- ${name}${estimate}, rebuilt from the catalog by Postgres Agent\n${[ddl.create, ...ddl.after].join('\n')}\n`;
}
