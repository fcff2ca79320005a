/**
 * Tables that are the same in many schemas (a schema per tenant, per customer, per year): one entry for all of
 * them, shown once with the list of schemas that share it. Two tables are the same when their name, kind,
 * columns (names and types), family members and foreign keys (by target table, schema left out when it is
 * their own) are. Only schemas that share at least two such tables, or tables shared by three schemas or more,
 * are grouped: a lone look-alike in two unrelated schemas stays apart.
 */
import type { TableInfo } from '../../../shared/schema';

export interface SchemaGroups {
  /** Table index → its group's representative table (itself when alone or the representative). */
  representative: Int32Array;
  /** Representative → every table of the group (itself first, then by schema name). */
  members: Map<number, number[]>;
}

const collator = new Intl.Collator('en', { numeric: true });

/** `heads`: the tables that stand for their family (partitions and shards are already folded). */
export function schemaGroups(
  tables: readonly TableInfo[],
  heads: readonly number[],
  familyNames: (i: number) => string,
): SchemaGroups {
  const representative = new Int32Array(tables.length);
  for (let i = 0; i < tables.length; i++) representative[i] = i;
  const bySignature = new Map<string, number[]>();
  for (const i of heads) {
    const t = tables[i];
    if (!t || t.columns.length < 2) continue;
    const key = signatureOf(t, familyNames(i));
    const list = bySignature.get(key);
    if (list) list.push(i);
    else bySignature.set(key, [i]);
  }
  const candidates: number[][] = [];
  const schemaSets = new Map<string, number>();
  for (const list of bySignature.values()) {
    const schemas = new Set(list.map((i) => tables[i]?.schema));
    if (schemas.size < 2 || schemas.size !== list.length) continue;
    list.sort((a, b) => collator.compare(tables[a]?.schema ?? '', tables[b]?.schema ?? ''));
    candidates.push(list);
    const set = list.map((i) => tables[i]?.schema).join('\u0000');
    schemaSets.set(set, (schemaSets.get(set) ?? 0) + 1);
  }
  const members = new Map<number, number[]>();
  for (const list of candidates) {
    const set = list.map((i) => tables[i]?.schema).join('\u0000');
    if (list.length < 3 && (schemaSets.get(set) ?? 0) < 2) continue;
    const rep = list[0] ?? 0;
    members.set(rep, list);
    for (const i of list) representative[i] = rep;
  }
  return { representative, members };
}

function signatureOf(t: TableInfo, familyNames: string): string {
  const columns = t.columns.map((c) => `${c.name}:${c.type}`).join(',');
  const fks = t.foreignKeys
    .map(
      (fk) =>
        `${fk.columns.join(',')}>${fk.references.schema === t.schema ? '' : fk.references.schema}.${fk.references.table}`,
    )
    .sort()
    .join(';');
  return `${t.name}\u0000${t.kind}\u0000${columns}\u0000${fks}\u0000${familyNames}`;
}
