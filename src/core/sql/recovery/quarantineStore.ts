/**
 * The quarantine (issue 25, SPEC §6 `pg-agent undo` / `quarantine list|purge`): a schema in the database
 * itself where destructive DDL leaves what it would have destroyed (a dropped table, a dropped column's
 * values, a truncated table's rows), with one row per kept thing saying what it was, which ticket put it
 * there, until when it is kept, and the SQL that puts it back. Kept in the database so it commits or rolls
 * back with the statement that made it, and so every teammate's `pg-agent` sees the same quarantine.
 */
import type { DbSession } from '../../db/db';

export const QUARANTINE_SCHEMA = 'pgagent_quarantine';
/**
 * A dropped table moves, with its indexes, constraints and owned sequences, to a schema of its own named
 * with this prefix: their names can never collide with another quarantined table's.
 */
export const QUARANTINE_TABLE_SCHEMA_PREFIX = 'pgagent_q_';

/** Whether a schema is the quarantine's (statements on it get no recovery of their own). */
export function isQuarantineSchema(schema: string): boolean {
  return schema === QUARANTINE_SCHEMA || schema.startsWith(QUARANTINE_TABLE_SCHEMA_PREFIX);
}
const ENTRIES = `${QUARANTINE_SCHEMA}.entries`;

/**
 * The tables a write changed, without the quarantine's own (its bookkeeping rows, the copies it keeps or drops):
 * what the way back keeps is not a change of the data, neither in the impact nor when the write runs.
 */
export function outsideQuarantine<T extends { schema: string }>(tables: readonly T[]): T[] {
  return tables.filter((t) => !isQuarantineSchema(t.schema));
}

export type QuarantineKind = 'table' | 'column' | 'rows';

export interface QuarantineEntry {
  /** kind table: the schema the table was moved to; otherwise the copy's table name in QUARANTINE_SCHEMA. */
  id: string;
  ticket: string;
  /** The statement of the ticket that made it, and its place among that statement's entries (undo order). */
  statement: number;
  position: number;
  kind: QuarantineKind;
  /** "public.orders", or "public.orders.note" for a column. */
  original: string;
  bytes: number;
  restoreSql: string;
  createdAt: string;
  expiresAt: string;
}

/** Creates the schema and its entries table when missing (inside the executing transaction). */
export async function ensureQuarantine(session: DbSession): Promise<void> {
  await session.query(`CREATE SCHEMA IF NOT EXISTS ${QUARANTINE_SCHEMA}`);
  await session.query(
    `CREATE TABLE IF NOT EXISTS ${ENTRIES} (
       id text PRIMARY KEY,
       ticket text NOT NULL,
       statement int NOT NULL,
       position int NOT NULL,
       kind text NOT NULL CHECK (kind IN ('table', 'column', 'rows')),
       original text NOT NULL,
       bytes bigint NOT NULL,
       restore_sql text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL
     )`,
  );
}

export async function recordEntry(
  session: DbSession,
  entry: Omit<QuarantineEntry, 'createdAt' | 'expiresAt'>,
  retentionDays: number,
): Promise<void> {
  await session.query(
    `INSERT INTO ${ENTRIES} (id, ticket, statement, position, kind, original, bytes, restore_sql, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(days => $9::int))`,
    [
      entry.id,
      entry.ticket,
      entry.statement,
      entry.position,
      entry.kind,
      entry.original,
      entry.bytes,
      entry.restoreSql,
      Math.max(0, Math.round(retentionDays)),
    ],
  );
}

/** Every entry (newest first), or those of one ticket; none when the quarantine was never used. */
export async function listEntries(
  session: DbSession,
  filter: { ticket?: string; expiredOnly?: boolean } = {},
): Promise<QuarantineEntry[]> {
  const exists = await session.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [ENTRIES]);
  if (!exists.rows[0]?.ok) return [];
  const result = await session.query<{
    id: string;
    ticket: string;
    statement: number;
    position: number;
    kind: QuarantineKind;
    original: string;
    bytes: number;
    restore_sql: string;
    created_at: string;
    expires_at: string;
  }>(
    `SELECT id, ticket, statement, position, kind, original, bytes::float8 AS bytes, restore_sql,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
            to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS expires_at
     FROM ${ENTRIES}
     WHERE ($1::text IS NULL OR ticket = $1) AND (NOT $2 OR expires_at <= now())
     ORDER BY created_at DESC, ticket, statement DESC, position`,
    [filter.ticket ?? null, filter.expiredOnly === true],
  );
  return result.rows.map((r) => ({
    id: r.id,
    ticket: r.ticket,
    statement: r.statement,
    position: r.position,
    kind: r.kind,
    original: r.original,
    bytes: r.bytes,
    restoreSql: r.restore_sql,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }));
}

/**
 * The SQL that puts back what a ticket's entries keep: later statements first (undone in reverse), within a
 * statement in the order they were kept (a TRUNCATE … CASCADE's referenced tables before their referencing ones).
 */
export function restoreSqlOf(entries: readonly QuarantineEntry[]): string {
  return [...entries]
    .sort((a, b) => b.statement - a.statement || a.position - b.position)
    .map((e) => e.restoreSql)
    .join('\n');
}

/** The SQL that removes entries for good: their kept relations dropped, their rows deleted (a held write). */
export function purgeSql(entries: readonly Pick<QuarantineEntry, 'id' | 'kind'>[]): string {
  const ids = entries.map((e) => quoteLiteral(e.id)).join(', ');
  const drops = entries.map((e) =>
    e.kind === 'table'
      ? `DROP SCHEMA IF EXISTS ${quoteIdent(e.id)} CASCADE;`
      : `DROP TABLE IF EXISTS ${QUARANTINE_SCHEMA}.${quoteIdent(e.id)};`,
  );
  return [...drops, `DELETE FROM ${ENTRIES} WHERE id IN (${ids});`].join('\n');
}

/** The statement that forgets an entry once it is restored (part of its restore SQL). */
export function forgetEntrySql(id: string): string {
  return `DELETE FROM ${ENTRIES} WHERE id = ${quoteLiteral(id)};`;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
