/**
 * Index candidates for a set of queries: single columns from predicates and joins, multi-column ones (equality
 * columns first, then a range or the sort), and covering ones (INCLUDE the selected columns), each resolved
 * against the catalog and left out when an existing index already leads with the same columns.
 */
import type { CatalogReader } from '../catalogRead';
import type { ColumnUse, QueryUsage } from './columnUsage';

export interface IndexCandidate {
  key: string;
  /** Schema-qualified, quoted: public.orders. */
  table: string;
  /** Quoted column names. */
  columns: string[];
  include: string[];
  /** Which input queries (by index) it was derived from. */
  queries: number[];
  /** Why: "equality on status", "join on customer_id", "sort on created_at". */
  reasons: string[];
  /** Heuristic score (without hypopg, the ranking). */
  score: number;
  tableRows: number;
}

interface ResolvedTable {
  alias: string;
  table: string;
  oid: number;
  columns: Map<string, string>;
  rows: number;
  /** Leading key columns of each existing valid index, quoted, joined by ",". */
  existing: string[];
}

interface TableRow {
  name: string;
  oid: number | null;
  table: string | null;
  columns: string[] | null;
  quoted: string[] | null;
  rows: string | null;
  indexes: string[] | null;
}

const ROLE_WORD: Record<ColumnUse['role'], string> = {
  eq: 'equality on',
  range: 'range on',
  join: 'join on',
  order: 'sort on',
  group: 'grouping on',
};
const ROLE_WEIGHT: Record<ColumnUse['role'], number> = { eq: 3, join: 2, range: 2, order: 1, group: 1 };

export interface CandidateSet {
  candidates: IndexCandidate[];
  /** The tables (schema-qualified) each query reads: a candidate is measured on the queries of its table. */
  queryTables: Map<number, Set<string>>;
}

export async function buildCandidates(
  reader: CatalogReader,
  usages: readonly { query: number; usage: QueryUsage; weight: number }[],
): Promise<CandidateSet> {
  const names = [...new Set(usages.flatMap((u) => u.usage.tables.map((t) => t.name)))];
  const queryTables = new Map<number, Set<string>>();
  if (names.length === 0) return { candidates: [], queryTables };
  // to_regclass resolves each name through search_path exactly as the query would.
  const rows = await reader.read<TableRow>(
    `SELECT n.name, c.oid::int AS oid, CASE WHEN c.oid IS NOT NULL THEN format('%I.%I', ns.nspname, c.relname) END AS "table",
            (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT array_agg(quote_ident(a.attname) ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS quoted,
            greatest(c.reltuples, 0)::bigint::text AS rows,
            (SELECT array_agg((SELECT string_agg(quote_ident(a.attname), ',' ORDER BY k.i) FROM unnest(string_to_array(x.indkey::text, ' ')::int2[]) WITH ORDINALITY k(attnum, i)
                                 JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum WHERE k.i <= x.indnkeyatts))
               FROM pg_index x WHERE x.indrelid = c.oid AND x.indisvalid AND x.indpred IS NULL AND x.indexprs IS NULL) AS indexes
       FROM unnest($1::text[]) n(name)
       LEFT JOIN (pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
                  AND ns.nspname NOT IN ('pg_catalog', 'information_schema') AND ns.nspname NOT LIKE 'pg_toast%')
              ON c.oid = to_regclass(n.name) AND c.relkind IN ('r', 'm', 'p')`,
    [names],
  );
  const byName = new Map(rows.filter((r) => r.oid !== null).map((r) => [r.name, r]));
  const found = new Map<string, IndexCandidate>();
  const add = (
    resolved: ResolvedTable,
    columns: string[],
    include: string[],
    reason: string,
    query: number,
    score: number,
  ) => {
    if (columns.length === 0) return;
    const joined = columns.join(',');
    // An existing index leading with these columns already serves them (a covering one only when it includes them too).
    if (include.length === 0 && resolved.existing.some((e) => e === joined || e.startsWith(`${joined},`))) return;
    const key = `${resolved.table}(${joined})${include.length ? ` INCLUDE (${include.join(',')})` : ''}`;
    const candidate = found.get(key) ?? {
      key,
      table: resolved.table,
      columns,
      include,
      queries: [],
      reasons: [],
      score: 0,
      tableRows: resolved.rows,
    };
    if (!candidate.queries.includes(query)) candidate.queries.push(query);
    if (!candidate.reasons.includes(reason)) candidate.reasons.push(reason);
    candidate.score += score * Math.log10(10 + resolved.rows);
    found.set(key, candidate);
  };
  for (const { query, usage, weight } of usages) {
    const tables: ResolvedTable[] = [];
    for (const t of usage.tables) {
      const row = byName.get(t.name);
      if (!row?.table || !row.columns || !row.quoted || row.oid === null) continue;
      tables.push({
        alias: t.alias,
        table: row.table,
        oid: row.oid,
        columns: new Map(row.columns.map((c, i) => [c, row.quoted?.[i] ?? c])),
        rows: Number(row.rows ?? 0),
        existing: row.indexes ?? [],
      });
      const seen = queryTables.get(query) ?? new Set<string>();
      seen.add(row.table);
      queryTables.set(query, seen);
    }
    const tableOf = (qualifier: string | undefined, column: string): ResolvedTable | undefined => {
      if (qualifier !== undefined) return tables.find((t) => t.alias === qualifier && t.columns.has(column));
      const owners = tables.filter((t) => t.columns.has(column));
      return owners.length === 1 ? owners[0] : undefined;
    };
    for (const table of tables) {
      const mine = usage.uses.filter((u) => tableOf(u.qualifier, u.column) === table);
      const quote = (c: string) => table.columns.get(c) ?? c;
      const ofRole = (...roles: ColumnUse['role'][]) => [
        ...new Set(mine.filter((u) => roles.includes(u.role)).map((u) => quote(u.column))),
      ];
      for (const use of mine) {
        if (use.role === 'group') continue;
        add(
          table,
          [quote(use.column)],
          [],
          `${ROLE_WORD[use.role]} ${use.column}`,
          query,
          ROLE_WEIGHT[use.role] * weight,
        );
      }
      const eq = ofRole('eq', 'join').slice(0, 3);
      const range = ofRole('range').filter((c) => !eq.includes(c));
      const order = ofRole('order').filter((c) => !eq.includes(c));
      const composite = [...eq, ...(range.length > 0 ? range.slice(0, 1) : order.slice(0, 2))];
      if (composite.length >= 2)
        add(table, composite, [], `multi-column: ${composite.join(', ')}`, query, (eq.length * 3 + 2) * weight);
      const lead = composite.length >= 2 ? composite : eq.length > 0 ? eq : range.slice(0, 1);
      if (!usage.selected.star && lead.length > 0) {
        const selected = [
          ...new Set(
            usage.selected.columns.filter((c) => tableOf(c.qualifier, c.column) === table).map((c) => quote(c.column)),
          ),
        ].filter((c) => !lead.includes(c));
        if (selected.length > 0 && selected.length <= 3)
          add(
            table,
            lead,
            selected,
            `covering: ${lead.join(', ')} INCLUDE ${selected.join(', ')}`,
            query,
            (lead.length * 3 + 3) * weight,
          );
      }
    }
  }
  return {
    candidates: [...found.values()].sort((a, b) => b.score - a.score || a.key.localeCompare(b.key)),
    queryTables,
  };
}

/** `CREATE INDEX CONCURRENTLY` for a candidate (the name left to PostgreSQL, which picks a free one). */
export function createIndexSql(
  candidate: Pick<IndexCandidate, 'table' | 'columns' | 'include'>,
  concurrently = true,
): string {
  return `CREATE INDEX${concurrently ? ' CONCURRENTLY' : ''} ON ${candidate.table} (${candidate.columns.join(', ')})${candidate.include.length > 0 ? ` INCLUDE (${candidate.include.join(', ')})` : ''}`;
}
