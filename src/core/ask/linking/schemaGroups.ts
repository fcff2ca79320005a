/**
 * Tables that are the same in many schemas (a schema per tenant, per customer, per year): one entry for all of
 * them, shown once with the list of schemas that share it. Two tables are the same when their name, kind,
 * columns (names and types), family members and foreign keys (by target table, schema left out when it is
 * their own) are. A table shared by three schemas or more is grouped; one shared by two only when those two
 * share another such table too: a lone look-alike in two unrelated schemas stays apart.
 */
import type { TableInfo } from '../../../shared/schema';
import { columnSignature } from '../tableFamilies';

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
  const schemaOrder = new Map(
    [...new Set(heads.map((i) => tables[i]?.schema ?? ''))].sort(collator.compare).map((s, k) => [s, k]),
  );
  const candidates: number[][] = [];
  /** Schema → the candidate groups it is in, to tell whether two schemas share more than one table. */
  const inCandidates = new Map<string, Set<number>>();
  for (const list of bySignature.values()) {
    const schemas = new Set(list.map((i) => tables[i]?.schema ?? ''));
    if (schemas.size < 2 || schemas.size !== list.length) continue;
    list.sort(
      (a, b) => (schemaOrder.get(tables[a]?.schema ?? '') ?? 0) - (schemaOrder.get(tables[b]?.schema ?? '') ?? 0),
    );
    for (const schema of schemas) {
      const set = inCandidates.get(schema) ?? new Set<number>();
      set.add(candidates.length);
      inCandidates.set(schema, set);
    }
    candidates.push(list);
  }
  const members = new Map<number, number[]>();
  for (const list of candidates) {
    if (list.length < 3) {
      const [a, b] = list.map((i) => inCandidates.get(tables[i]?.schema ?? '') ?? new Set<number>());
      let shared = 0;
      if (a && b) for (const c of a) if (b.has(c) && ++shared >= 2) break;
      if (shared < 2) continue;
    }
    const rep = list[0] ?? 0;
    members.set(rep, list);
    for (const i of list) representative[i] = rep;
  }
  return { representative, members };
}

function signatureOf(t: TableInfo, familyNames: string): string {
  const columns = columnSignature(t);
  const fks = t.foreignKeys
    .map(
      (fk) =>
        `${fk.columns.join(',')}>${fk.references.schema === t.schema ? '' : fk.references.schema}.${fk.references.table}`,
    )
    .sort()
    .join(';');
  return `${t.name}\u0000${t.kind}\u0000${columns}\u0000${fks}\u0000${familyNames}`;
}
