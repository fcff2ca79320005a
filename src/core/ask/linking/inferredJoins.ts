/**
 * Join columns a schema does not declare (a warehouse, a schema loaded without constraints, an ORM that
 * declares some relations and leaves others to the code): a column `x_id` (or `xid`) joins the table named x
 * (x, xs, xes, or x with y → ies) on its single-column key, when the types agree, unless the column is already
 * part of a declared foreign key. In a schema whose tables declare no foreign key at all, a column named like
 * another table's single-column key (`customer_key` → dim_customer.customer_key) joins that table too. Such a
 * join is said to be inferred wherever it is shown; the ranking follows it only in a schema that declares no
 * joins of its own (where a schema declares its joins, they are what ties its tables together, and measured on
 * BEAVER and Spider, following the guessed ones beside them gained nothing and lost a Spider question).
 */
import type { TableInfo } from '../../../shared/schema';

export interface InferredJoin {
  /** Table index that holds the column. */
  from: number;
  column: string;
  /** Table index it joins, and the key column there. */
  to: number;
  target: string;
  /** The schema declares no foreign keys: the ranking follows this join as it would a declared one. */
  followed: boolean;
}

export function inferredJoins(tables: readonly TableInfo[], heads: readonly number[]): InferredJoin[] {
  const declared = new Set<string>();
  for (const t of tables) if (t.foreignKeys.length > 0) declared.add(t.schema);
  const bySchema = new Map<string, number[]>();
  for (const i of heads) {
    const t = tables[i];
    if (!t) continue;
    const list = bySchema.get(t.schema);
    if (list) list.push(i);
    else bySchema.set(t.schema, [i]);
  }
  const joins: InferredJoin[] = [];
  for (const [schema, list] of bySchema) {
    /** The schema declares no joins: key names join too, and the ranking follows what is inferred. */
    const alone = !declared.has(schema);
    const byName = new Map<string, number>();
    const byKeyColumn = new Map<string, number[]>();
    for (const i of list) {
      const t = tables[i];
      if (!t) continue;
      byName.set(t.name.toLowerCase(), i);
      const key = singleKey(t);
      if (key && key.toLowerCase() !== 'id') {
        const owners = byKeyColumn.get(key.toLowerCase()) ?? [];
        owners.push(i);
        byKeyColumn.set(key.toLowerCase(), owners);
      }
    }
    for (const i of list) {
      const t = tables[i];
      if (!t) continue;
      const own = singleKey(t)?.toLowerCase();
      const fkColumns = new Set(t.foreignKeys.flatMap((fk) => fk.columns));
      for (const column of t.columns) {
        const name = column.name.toLowerCase();
        if (fkColumns.has(column.name)) continue;
        if (name === own && !/_id$|id$/.test(name)) continue;
        let to: number | undefined;
        const stem = /^(.+?)_?id$/.exec(name)?.[1];
        if (stem && name !== 'id')
          to = [stem, `${stem}s`, `${stem}es`, stem.replace(/y$/, 'ies')]
            .map((n) => byName.get(n))
            .find((x) => x !== undefined && x !== i);
        if (to === undefined && alone) to = (byKeyColumn.get(name) ?? []).find((x) => x !== i && name !== own);
        const target = to === undefined ? undefined : tables[to];
        const key = target ? singleKey(target) : undefined;
        if (to === undefined || !target || !key) continue;
        const keyType = target.columns.find((c) => c.name === key)?.type;
        if (keyType === undefined || typeFamily(keyType) !== typeFamily(column.type)) continue;
        joins.push({ from: i, column: column.name, to, target: key, followed: alone });
      }
    }
  }
  return joins;
}

function singleKey(t: TableInfo): string | undefined {
  if (t.primaryKey?.length === 1) return t.primaryKey[0];
  const unique = t.uniqueConstraints.find((u) => u.length === 1);
  return unique?.[0];
}

function typeFamily(type: string): string {
  if (/^(?:smallint|integer|bigint|int\d?|numeric|decimal)/.test(type)) return 'number';
  if (/^(?:text|character|varchar|char)/.test(type)) return 'text';
  return type;
}
