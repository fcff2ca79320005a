/**
 * Context gathering (seed phase 1, for a database): the ranked schema context of the task within its token
 * budget, each table's size and row estimate, indexes, the foreign-key paths between the tables involved,
 * activity statistics (pg_stat_user_tables), and EXPLAIN of any read the task names. Only reads, each in a
 * READ ONLY transaction; the result is context.json.
 */
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import { buildSchemaContext } from '../ask/schemaContext';
import type { Db } from '../db/db';
import { classifySql } from '../sql/classify';
import { runRead } from '../sql/runRead';

export const DEFAULT_CONTEXT_BUDGET = 6000;
/** Tables given sizes, statistics and FK paths (the best ranked ones). */
const DETAILED_TABLES = 8;

export interface TableContext {
  schema: string;
  name: string;
  score: number;
  columns: string[];
  rowEstimate: number | null;
  totalBytes: number | null;
  indexes: string[];
  stats: Record<string, string | number | null> | null;
}

export interface ExplainedQuery {
  sql: string;
  plan: unknown;
  error: string | null;
}

export interface GatheredContext {
  task: string;
  budgetTokens: number;
  tokens: number;
  schemaTokens: number;
  /** The text the models see: one block per ranked table. */
  schemaText: string;
  tables: TableContext[];
  /** "orders.customer_id → customers.id" chains between the tables involved. */
  fkPaths: string[];
  explains: ExplainedQuery[];
}

export interface GatherOptions {
  budgetTokens?: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

export async function gatherContext(
  db: Db,
  snapshot: SchemaSnapshot,
  task: string,
  options: GatherOptions,
): Promise<GatheredContext> {
  const budgetTokens = options.budgetTokens ?? DEFAULT_CONTEXT_BUDGET;
  const ranked = buildSchemaContext(snapshot, task, { budgetTokens });
  const byKey = new Map(snapshot.tables.map((t) => [`${t.schema}.${t.name}`, t]));
  const detailed = ranked.tables.slice(0, DETAILED_TABLES);
  const keys = detailed.map((t) => `${t.schema}.${t.name}`);
  const [sizes, stats] = await Promise.all([readSizes(db, keys), readStats(db, keys)]);
  const tables = ranked.tables.map((t, i): TableContext => {
    const key = `${t.schema}.${t.name}`;
    const info = byKey.get(key);
    return {
      schema: t.schema,
      name: t.name,
      score: t.score,
      columns: t.columns,
      rowEstimate: info?.rowEstimate ?? null,
      totalBytes: i < DETAILED_TABLES ? (sizes.get(key) ?? null) : null,
      indexes: info?.indexes.map((x) => x.definition) ?? [],
      stats: i < DETAILED_TABLES ? (stats.get(key) ?? null) : null,
    };
  });
  const explains: ExplainedQuery[] = [];
  for (const sql of queriesNamedIn(task)) explains.push(await explainRead(db, sql, options));
  return {
    task,
    budgetTokens,
    tokens: ranked.tokens,
    schemaTokens: ranked.schemaTokens,
    schemaText: ranked.text,
    tables,
    fkPaths: fkPaths(snapshot.tables, keys),
    explains,
  };
}

/** EXPLAIN (FORMAT JSON) of one statement the classifier calls a read, in a READ ONLY transaction. */
export async function explainRead(
  db: Db,
  sql: string,
  limits: { statementTimeoutMs: number; lockTimeoutMs: number },
): Promise<ExplainedQuery> {
  try {
    const result = await runRead(db, `EXPLAIN (FORMAT JSON) ${sql.trim().replace(/;\s*$/, '')}`, false, {
      maxRows: 10,
      ...limits,
    });
    const cell = result.rows[0]?.[0];
    return { sql, plan: typeof cell === 'string' ? (JSON.parse(cell) as unknown) : (cell ?? null), error: null };
  } catch (error) {
    return { sql, plan: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Reads the task quotes: fenced blocks, or a line starting with SELECT/WITH, when the parser calls them reads. */
export function queriesNamedIn(task: string): string[] {
  const candidates = [...task.matchAll(/```(?:sql)?\s*\n?([\s\S]*?)```/gi)].map((m) => m[1] ?? '');
  for (const line of task.split('\n')) {
    const match = /\b((?:SELECT|WITH)\s[\s\S]*)$/i.exec(line);
    if (match?.[1] && !task.includes('```')) candidates.push(match[1]);
  }
  const reads: string[] = [];
  for (const candidate of candidates) {
    try {
      const classification = classifySql(candidate);
      if (classification.decision !== 'run') continue;
      for (const s of classification.statements) if (s.class === 'read' && !reads.includes(s.sql)) reads.push(s.sql);
    } catch {
      // Not SQL after all (prose that happens to start with "with"): nothing to explain.
      continue;
    }
  }
  return reads.slice(0, 3);
}

async function readSizes(db: Db, keys: string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const rows = await readOnly(
    db,
    `SELECT n.nspname || '.' || c.relname AS key, pg_total_relation_size(c.oid)::float8 AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname || '.' || c.relname = ANY($1::text[])`,
    [keys],
  );
  return new Map(rows.map((r) => [String(r.key), Number(r.bytes)]));
}

async function readStats(db: Db, keys: string[]): Promise<Map<string, Record<string, string | number | null>>> {
  if (keys.length === 0) return new Map();
  const rows = await readOnly(
    db,
    `SELECT schemaname || '.' || relname AS key, seq_scan::float8, idx_scan::float8, n_live_tup::float8, n_dead_tup::float8,
            n_tup_ins::float8, n_tup_upd::float8, n_tup_del::float8, last_analyze::text, last_autoanalyze::text, last_autovacuum::text
       FROM pg_stat_user_tables WHERE schemaname || '.' || relname = ANY($1::text[])`,
    [keys],
  );
  return new Map(
    rows.map((r) => {
      const { key, ...rest } = r;
      return [
        String(key),
        Object.fromEntries(
          Object.entries(rest).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'string' ? v : null]),
        ),
      ];
    }),
  );
}

/** Our own catalog queries (fixed text, parameters only), in a READ ONLY transaction like every read. */
async function readOnly(db: Db, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  return db.withSession(async (session) => {
    await session.query('BEGIN READ ONLY');
    try {
      return (await session.query(sql, params)).rows;
    } finally {
      await session.query('ROLLBACK');
    }
  });
}

/** Shortest FK chains (either direction, up to 3 hops) between each pair of the given tables. */
export function fkPaths(tables: readonly TableInfo[], keys: readonly string[]): string[] {
  const edges = new Map<string, { to: string; label: string }[]>();
  const add = (from: string, to: string, label: string) => {
    const list = edges.get(from) ?? [];
    list.push({ to, label });
    edges.set(from, list);
  };
  for (const t of tables) {
    const from = `${t.schema}.${t.name}`;
    for (const fk of t.foreignKeys) {
      const to = `${fk.references.schema}.${fk.references.table}`;
      const label = `${t.name}.${fk.columns.join(',')} → ${fk.references.table}.${fk.references.columns.join(',')}`;
      add(from, to, label);
      add(to, from, label);
    }
  }
  const paths: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    for (let j = i + 1; j < keys.length; j++) {
      const path = shortestPath(edges, keys[i] ?? '', keys[j] ?? '', 3);
      if (path) paths.push(path.join('; '));
    }
  }
  return paths;
}

function shortestPath(
  edges: Map<string, { to: string; label: string }[]>,
  from: string,
  to: string,
  maxHops: number,
): string[] | undefined {
  let frontier: { at: string; labels: string[] }[] = [{ at: from, labels: [] }];
  const seen = new Set([from]);
  for (let hop = 0; hop < maxHops; hop++) {
    const next: typeof frontier = [];
    for (const { at, labels } of frontier) {
      for (const edge of edges.get(at) ?? []) {
        if (seen.has(edge.to)) continue;
        const path = [...labels, edge.label];
        if (edge.to === to) return path;
        seen.add(edge.to);
        next.push({ at: edge.to, labels: path });
      }
    }
    frontier = next;
  }
  return undefined;
}
