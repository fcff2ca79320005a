/**
 * Runs a read (SPEC §5.2): in BEGIN READ ONLY with SET LOCAL statement_timeout and lock_timeout, through
 * a server-side cursor fetched in batches so no more than the row cap (+1 to know it was truncated) is
 * ever held in memory. The READ ONLY transaction catches what no parser can see (a function that writes).
 */
import type { Db, DbSession } from '../db/db';
import type { TypeInfo } from '../db/typeInfo';
import { lookupTypes } from '../db/typeInfo';
import type { JsonValue } from '../db/valueEncoding';
import { encodeValue } from '../db/valueEncoding';
import type { StatementClassification } from './classification';
import { assertReachAllows, refuseEffects } from './reach/checkSql';
import type { QueryHistory } from './history/queryHistory';

export interface ReadLimits {
  maxRows: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** Rows per FETCH; defaults to min(maxRows + 1, 1000). */
  batchSize?: number;
  /** Where the read is recorded (`.pgagent/history/`), when the surface keeps a history. */
  history?: QueryHistory;
}

export interface ReadResult {
  fields: { name: string; type: string }[];
  rows: JsonValue[][];
  rowCount: number;
  /** More rows existed than the cap allowed. */
  truncated: boolean;
  elapsedMs: number;
}

const typeCaches = new WeakMap<Db, Map<number, TypeInfo>>();

/**
 * `read` is one statement the classifier called a read (its text, or its classification from checkSql), without a
 * trailing semicolon;
 * `useCursor` is true for SELECT/VALUES/TABLE (SHOW and EXPLAIN cannot be declared as cursors).
 */
export async function runRead(
  db: Db,
  read: string | StatementClassification,
  useCursor: boolean,
  limits: ReadLimits,
): Promise<ReadResult> {
  const started = performance.now();
  const statement = typeof read === 'string' ? read : read.sql;
  if (!limits.history) return readOnce(db, read, statement, useCursor, limits, started);
  const startedAt = Date.now();
  try {
    const result = await readOnce(db, read, statement, useCursor, limits, started);
    limits.history.record(db.label, {
      kind: 'read',
      sql: statement,
      startedAt,
      ms: result.elapsedMs,
      rows: result.rowCount,
    });
    return result;
  } catch (error) {
    const ms = performance.now() - started;
    limits.history.record(db.label, { kind: 'read', sql: statement, startedAt, ms, rows: null, error: String(error) });
    throw error;
  }
}

async function readOnce(
  db: Db,
  read: string | StatementClassification,
  statement: string,
  useCursor: boolean,
  limits: ReadLimits,
  started: number,
): Promise<ReadResult> {
  // Whoever called: a read runs none of the database's code that does more than read (SPEC §5 1a). A statement
  // checkSql already looked at carries its reach (not looked up twice); any other text is checked now.
  if (typeof read !== 'string' && read.reach !== undefined) refuseEffects(read.reachEffects ?? [], 'read');
  else await assertReachAllows(db, statement, 'read');
  let typeCache = typeCaches.get(db);
  if (!typeCache) {
    typeCache = new Map();
    typeCaches.set(db, typeCache);
  }
  const types = typeCache;
  return db.withSession(async (session) => {
    await session.query('BEGIN READ ONLY');
    try {
      await setLocalTimeouts(session, limits.statementTimeoutMs, limits.lockTimeoutMs);
      const raw = useCursor
        ? await fetchCapped(session, statement, limits)
        : await fetchAll(session, statement, limits.maxRows);
      await lookupTypes(
        session,
        raw.fields.map((f) => f.dataTypeID),
        types,
      );
      return {
        fields: raw.fields.map((f) => ({ name: f.name, type: types.get(f.dataTypeID)?.name ?? String(f.dataTypeID) })),
        rows: raw.rows.map((row) => row.map((value, i) => encodeValue(value, raw.fields[i]?.dataTypeID ?? 0, types))),
        rowCount: raw.rows.length,
        truncated: raw.truncated,
        elapsedMs: Math.round(performance.now() - started),
      };
    } finally {
      // A read changes nothing; ROLLBACK also ends a transaction that a failed statement aborted.
      await session.query('ROLLBACK');
    }
  });
}

export async function setLocalTimeouts(
  session: DbSession,
  statementTimeoutMs: number,
  lockTimeoutMs: number,
): Promise<void> {
  // SET cannot take parameters; the values are integers we produced, never user text.
  await session.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(statementTimeoutMs))}`);
  await session.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
}

interface RawRows {
  fields: { name: string; dataTypeID: number }[];
  rows: (string | null)[][];
  truncated: boolean;
}

async function fetchCapped(session: DbSession, statement: string, limits: ReadLimits): Promise<RawRows> {
  await session.query(`DECLARE pgagent_read NO SCROLL CURSOR FOR ${statement}`);
  const batch = Math.max(1, limits.batchSize ?? Math.min(limits.maxRows + 1, 1000));
  const rows: (string | null)[][] = [];
  let fields: RawRows['fields'] = [];
  for (;;) {
    const want = Math.min(batch, limits.maxRows + 1 - rows.length);
    const result = await session.queryText(`FETCH FORWARD ${want} FROM pgagent_read`);
    fields = result.fields;
    rows.push(...result.rows);
    if (result.rows.length < want || rows.length > limits.maxRows) break;
  }
  await session.query('CLOSE pgagent_read');
  const truncated = rows.length > limits.maxRows;
  if (truncated) rows.length = limits.maxRows;
  return { fields, rows, truncated };
}

async function fetchAll(session: DbSession, statement: string, maxRows: number): Promise<RawRows> {
  const result = await session.queryText(statement);
  const truncated = result.rows.length > maxRows;
  return { fields: result.fields, rows: truncated ? result.rows.slice(0, maxRows) : result.rows, truncated };
}
