/**
 * Families of tables that are one table in all but name: partitions under their parent, and tables with
 * the same columns whose names differ only by a numbered, dated or sharded suffix (events_2024_01,
 * crm_ticket_7, log_shard_03, measurement_y2006m02). A family ranks as one entry listing its members,
 * so nine copies never push nine other tables out of the context.
 */
import type { TableInfo } from '../../shared/schema';

export interface TableFamilies {
  /** Table index → the index of its family's representative (itself when alone or the representative). */
  representative: Int32Array;
  /** Representative index → every member's index (itself included), for families of two or more. */
  members: Map<number, number[]>;
}

/** A trailing run of shard/partition/date numbers: _7, _2024_01, _y2006m02, _p20240101, _shard_03, _part3, 2019q4. */
const SUFFIX = /(?:[_-]?(?:shard|part|p|y|q|v)?[_-]?\d+(?:[mqwd_-]?\d+)*)+$/i;

const signatures = new WeakMap<TableInfo, number>();
const signatureIds = new Map<string, number>();

/**
 * A number per distinct column list (names and types, in order), the same for equal lists: what families and
 * schema groups compare. Kept per table object (snapshots are immutable), so one schema is read once.
 */
export function columnSignature(table: TableInfo): number {
  let id = signatures.get(table);
  if (id === undefined) {
    let text = '';
    for (const c of table.columns) text += `${c.name}:${c.type},`;
    id = signatureIds.get(text);
    if (id === undefined) {
      if (signatureIds.size >= 1_000_000) signatureIds.clear();
      signatureIds.set(text, (id = signatureIds.size + 1));
    }
    signatures.set(table, id);
  }
  return id;
}

export function baseName(name: string): string | undefined {
  const base = name.replace(SUFFIX, '');
  return base !== name && base.length >= 2 ? base : undefined;
}

export function tableFamilies(tables: readonly TableInfo[]): TableFamilies {
  const representative = new Int32Array(tables.length);
  for (let i = 0; i < tables.length; i++) representative[i] = i;
  const members = new Map<number, number[]>();
  const index = new Map<string, number>();
  tables.forEach((t, i) => index.set(`${t.schema}.${t.name}`, i));

  // Partitions (at any depth) belong to their top-most parent.
  const top = (i: number): number => {
    let at = i;
    for (let hops = 0; hops < 8; hops++) {
      const parent = tables[at]?.partitionOf;
      const p = parent ? index.get(`${parent.schema}.${parent.table}`) : undefined;
      if (p === undefined) break;
      at = p;
    }
    return at;
  };
  // Grouped by name first; the column signature is built only where two names could be one family.
  const byBase = new Map<string, number[]>();
  const groups = new Map<string, number[]>();
  tables.forEach((t, i) => {
    if (t.partitionOf) {
      const parent = top(i);
      if (parent !== i) {
        groups.set(`p:${parent}`, [...(groups.get(`p:${parent}`) ?? [parent]), i]);
        return;
      }
    }
    const key = `${t.schema}\u0000${baseName(t.name) ?? t.name}\u0000${t.kind}`;
    const list = byBase.get(key);
    if (list) list.push(i);
    else byBase.set(key, [i]);
  });
  for (const [base, list] of byBase) {
    if (list.length < 2) continue;
    for (const i of list) {
      const t = tables[i];
      const key = `s:${base}\u0000${t ? columnSignature(t) : 0}`;
      const same = groups.get(key);
      if (same) same.push(i);
      else groups.set(key, [i]);
    }
  }
  for (const [key, list] of groups) {
    if (list.length < 2) continue;
    // Only a suffix makes a family: two unrelated tables with equal columns and no suffix stay apart.
    if (
      key.startsWith('s:') &&
      list.filter((i) => baseName(tables[i]?.name ?? '') !== undefined).length < list.length - 1
    )
      continue;
    const rep = key.startsWith('p:') ? (list[0] ?? 0) : pickRepresentative(tables, list);
    const ordered = [
      rep,
      ...list.filter((i) => i !== rep).sort((a, b) => compareNames(tables[a]?.name ?? '', tables[b]?.name ?? '')),
    ];
    members.set(rep, ordered);
    for (const i of list) representative[i] = rep;
  }
  addPrefixedCopies(tables, index, representative, members);
  return { representative, members };
}

/** Prefixes that say a table is a copy of another (general database words, not one schema's). */
const COPY_PREFIXES = new Set([
  'shadow',
  'archive',
  'archived',
  'old',
  'bak',
  'backup',
  'history',
  'hist',
  'deleted',
  'copy',
  'tmp',
  'temp',
  'staging',
  'stg',
]);

/**
 * Copies kept under a prefix (`shadow_instances`, `archive_orders`, `old_users` with the columns of `instances`,
 * `orders`, `users`) join the family of the table they copy: a copy prefix, an underscore, then the name of a
 * table of the same schema with the same columns (names and types). `purchase_orders` with the columns of
 * `orders` stays a table of its own.
 */
function addPrefixedCopies(
  tables: readonly TableInfo[],
  index: ReadonlyMap<string, number>,
  representative: Int32Array,
  members: Map<number, number[]>,
): void {
  tables.forEach((t, i) => {
    const cut = t.name.indexOf('_');
    if (cut <= 0 || representative[i] !== i || members.has(i) || t.partitionOf) return;
    if (!COPY_PREFIXES.has(t.name.slice(0, cut).toLowerCase())) return;
    const base = index.get(`${t.schema}.${t.name.slice(cut + 1)}`);
    const copied = base === undefined ? undefined : tables[base];
    if (base === undefined || !copied || representative[base] !== base || copied.columns.length < 2) return;
    if (copied.kind !== t.kind || columnSignature(copied) !== columnSignature(t)) return;
    const list = members.get(base) ?? [base];
    list.push(i);
    members.set(base, list);
    representative[i] = base;
  });
}

/** The unsuffixed table when there is one, else the newest-looking (highest suffix) member. */
function pickRepresentative(tables: readonly TableInfo[], list: readonly number[]): number {
  const plain = list.find((i) => baseName(tables[i]?.name ?? '') === undefined);
  if (plain !== undefined) return plain;
  return [...list].sort((a, b) => compareNames(tables[b]?.name ?? '', tables[a]?.name ?? ''))[0] ?? 0;
}

const collator = new Intl.Collator('en', { numeric: true });

function compareNames(a: string, b: string): number {
  return collator.compare(a, b);
}
