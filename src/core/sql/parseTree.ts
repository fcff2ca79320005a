/** Reading libpg-query's JSON parse tree: typed access to fields, names and string nodes. */

export type Rec = Record<string, unknown>;

export function objectLabel(objectType: string): string {
  return objectType.replace('OBJECT_', '').replace('MATVIEW', 'MATERIALIZED VIEW').replaceAll('_', ' ');
}

export function objectName(node: unknown): string {
  const list = rec(node, 'List');
  if (list) return names(list.items);
  const withArgs = rec(node, 'ObjectWithArgs');
  if (withArgs) return names(withArgs.objname);
  const type = rec(node, 'TypeName');
  if (type) return names(type.names);
  return sval(node) ?? '?';
}

export function names(items: unknown): string {
  return (Array.isArray(items) ? items : []).map((i) => sval(i) ?? '?').join('.');
}

export function rangeVarName(rv: Rec | undefined): string | undefined {
  const relname = str(rv, 'relname');
  if (relname === undefined) return undefined;
  const schema = str(rv, 'schemaname');
  return schema === undefined ? relname : `${schema}.${relname}`;
}

export function pushName(list: string[], name: string | undefined): void {
  if (name !== undefined) list.push(name);
}

export function unique(list: string[]): string[] {
  return [...new Set(list)];
}

export function isRec(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field `key` of a record, if it is a record: also how a wrapped node is opened (rec(node, 'RangeVar')). */
export function rec(value: unknown, key: string): Rec | undefined {
  if (!isRec(value)) return undefined;
  const field = value[key];
  return isRec(field) ? field : undefined;
}

export function str(value: Rec | undefined, key: string): string | undefined {
  const field = value?.[key];
  return typeof field === 'string' ? field : undefined;
}

export function num(value: Rec, key: string): number {
  const field = value[key];
  return typeof field === 'number' ? field : 0;
}

export function arr(value: Rec | undefined, key: string): unknown[] {
  const field = value?.[key];
  return Array.isArray(field) ? (field as unknown[]) : [];
}

/** The text of a String node ({"String": {"sval": …}}) or of a string A_Const. */
export function sval(node: unknown): string | undefined {
  return str(rec(node, 'String'), 'sval') ?? str(rec(rec(node, 'A_Const'), 'sval'), 'sval');
}

/** A boolean option that is certainly false, as PostgreSQL's defGetBoolean reads it (no argument = true). */
export function isFalseOption(arg: unknown): boolean {
  if (arg === undefined) return false;
  const integer = rec(arg, 'Integer');
  if (integer) return (integer.ival ?? 0) === 0;
  // The grammar gives an option's word as a String node (never an A_Const): only that is read as false.
  const text = str(rec(arg, 'String'), 'sval')?.toLowerCase();
  return text === 'false' || text === 'off';
}

/**
 * Depth-first over a JSON tree without recursion (trees can nest thousands of levels): arrays are expanded in
 * order, `visit` gets each object and returns the children to walk next (none: its children are skipped).
 */
export function walkObjects(root: unknown, visit: (value: Rec) => readonly unknown[]): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      continue;
    }
    if (isRec(value)) for (const child of visit(value)) stack.push(child);
  }
}
