/**
 * Column lists shared by the tables that have the same one (a multi-tenant estate: the same tables in every
 * schema; 50,000 tables hold a handful of distinct lists). A shared list and its columns are frozen, so a
 * change to one table can never reach the others: a writer of one table's columns (CHECK literals, value
 * words, samples) takes a copy of its own first (`ownColumns`). Lists of column names (keys, foreign keys'
 * columns) are shared the same way (`NameLists`).
 */
import type { ColumnInfo, TableInfo } from '../../shared/schema';

/** One frozen copy of each distinct column list, by a key that says what the list is made of. */
export class ColumnLists {
  private readonly lists = new Map<string, readonly ColumnInfo[]>();

  /** The list known by `key`, made by `make` (then frozen) the first time. */
  of(key: string, make: () => ColumnInfo[]): ColumnInfo[] {
    let list = this.lists.get(key);
    if (!list) {
      list = freezeColumns(make());
      this.lists.set(key, list);
    }
    // Frozen: the type stays the contract's (TableInfo.columns), a write throws.
    return list as ColumnInfo[];
  }
}

/** The list and every column in it (with its arrays) frozen. */
export function freezeColumns(columns: ColumnInfo[]): readonly ColumnInfo[] {
  for (const c of columns) {
    if (c.allowedValues) Object.freeze(c.allowedValues);
    if (c.valueWords) Object.freeze(c.valueWords);
    if (c.samples) Object.freeze(c.samples);
    Object.freeze(c);
  }
  return Object.freeze(columns);
}

/** A copy of a column, its arrays copied too (same keys in the same order). */
export function copyColumn(c: ColumnInfo): ColumnInfo {
  const column: ColumnInfo = {
    name: c.name,
    type: c.type,
    nullable: c.nullable,
    default: c.default,
    comment: c.comment,
  };
  // The order introspection sets them in (JSON of a copy is the JSON of the original).
  if (c.allowedValues) column.allowedValues = [...c.allowedValues];
  if (c.valueWords) column.valueWords = [...c.valueWords];
  if (c.samples) column.samples = [...c.samples];
  return column;
}

/** The table's columns as a list of its own, copied first when shared (frozen): what a writer of one table changes. */
export function ownColumns(table: TableInfo): ColumnInfo[] {
  if (Object.isFrozen(table.columns)) table.columns = table.columns.map(copyColumn);
  return table.columns;
}

/** One frozen copy of each distinct list of column names (`["id"]` is most tables' primary key). */
export class NameLists {
  private readonly lists = new Map<string, readonly string[]>();

  of(names: string[]): string[] {
    const key = names.join('\u0000');
    let list = this.lists.get(key);
    if (!list) {
      list = Object.freeze(names);
      this.lists.set(key, list);
    }
    return list as string[];
  }
}
