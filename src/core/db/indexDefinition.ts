/**
 * An index's definition written as pg_get_indexdef writes it, for a plain index (key columns only, each with
 * the default operator class of its type and the column's own collation): `CREATE UNIQUE INDEX x_pkey ON
 * s.x USING btree (id)`. Deparsing costs the server far more than the index's few catalog facts cost to
 * read, and a database of 50,000 tables has 50,000 primary keys. Whatever this does not recognise as plain
 * is left to the server (undefined here), so the text is always the server's own.
 */

/** The server's quoting and operator classes, read once per introspection (QUOTING_SQL). */
export interface ServerNaming {
  /** Keywords quote_identifier quotes (every category but unreserved). */
  reserved: ReadonlySet<string>;
  quoteAll: boolean;
  /** `<access method oid> <type oid>` → the default operator class's oid, when exactly one. */
  defaultClass: ReadonlyMap<string, string>;
  /** Names quoted so far (schema, table, column and index names repeat across a large catalog). */
  quoted: Map<string, string>;
}

/** Rows of QUOTING_SQL: ['k', keyword] | ['q', quote_all_identifiers] | ['d', 'am type opclass']. */
export function serverNaming(rows: readonly (readonly (string | null)[])[]): ServerNaming {
  const reserved = new Set<string>();
  const defaultClass = new Map<string, string>();
  const ambiguous = new Set<string>();
  let quoteAll = false;
  for (const [kind, value] of rows) {
    if (value === null || value === undefined) continue;
    if (kind === 'k') reserved.add(value);
    else if (kind === 'q') quoteAll = value === 'on';
    else {
      const [am, type, opclass] = value.split(' ');
      const key = `${am} ${type}`;
      if (defaultClass.has(key)) ambiguous.add(key);
      defaultClass.set(key, opclass ?? '');
    }
  }
  for (const key of ambiguous) defaultClass.delete(key);
  return { reserved, quoteAll, defaultClass, quoted: new Map() };
}

/** As the server's quote_identifier: bare when lower-case letters, digits and _ and not a keyword it reserves. */
export function quoteIdentifier(naming: ServerNaming, name: string): string {
  let quoted = naming.quoted.get(name);
  if (quoted === undefined) {
    const bare = !naming.quoteAll && /^[a-z_][a-z0-9_]*$/.test(name) && !naming.reserved.has(name);
    quoted = bare ? name : `"${name.replaceAll('"', '""')}"`;
    naming.quoted.set(name, quoted);
  }
  return quoted;
}

/** A key column of the indexed table, by attnum. */
export interface KeyColumn {
  name: string;
  typeOid: string;
  collation: string;
}

export interface PlainIndex {
  name: string;
  unique: boolean;
  schema: string;
  table: string;
  am: string;
  amOid: string;
  /** int2vector / oidvector text: "1 2". */
  keys: string;
  classes: string;
  collations: string;
}

/** The definition, or undefined when the index is not plain enough to be written here. */
export function plainIndexDefinition(
  naming: ServerNaming,
  index: PlainIndex,
  column: (attnum: number) => KeyColumn | undefined,
): string | undefined {
  const keys = index.keys.split(' ');
  const classes = index.classes.split(' ');
  const collations = index.collations.split(' ');
  if (classes.length !== keys.length || collations.length !== keys.length) return undefined;
  const names: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = column(Number(keys[i]));
    if (!key || naming.defaultClass.get(`${index.amOid} ${key.typeOid}`) !== classes[i]) return undefined;
    if (collations[i] !== '0' && collations[i] !== key.collation) return undefined;
    names.push(quoteIdentifier(naming, key.name));
  }
  const q = (name: string) => quoteIdentifier(naming, name);
  return (
    `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${q(index.name)} ON ${q(index.schema)}.${q(index.table)} ` +
    `USING ${q(index.am)} (${names.join(', ')})`
  );
}
