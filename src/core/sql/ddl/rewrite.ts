/**
 * Whether a statement rewrites the table or scans it under its lock, refined from the catalog: a volatile
 * default rewrites (a constant or stable one is stored once, PostgreSQL 11+), a type change rewrites unless
 * the new type is binary coercible with a wider or equal modifier, SET NOT NULL does not scan when a
 * validated CHECK (col IS NOT NULL) already proves it (PostgreSQL 12+). Catalog reads only.
 */
import type { DbSession } from '../../db/db';
import { quoteQualified } from '../tableEffects';
import type { DdlChange, LockWork } from './ddlPlan';

export interface ChangeWork {
  /** The table ("as written") whose lock's work this decides. */
  table: string;
  work: LockWork;
  why: string;
}

/** The work each catalog-dependent change really does; changes not listed keep the lock model's work. */
export async function refineWork(session: DbSession, changes: readonly DdlChange[]): Promise<ChangeWork[]> {
  const refined: ChangeWork[] = [];
  for (const change of changes) {
    if (change.kind === 'addColumn' && change.defaultSql !== null && !change.generated && !change.identity) {
      const volatile = await volatileFunctions(session, change.defaultFunctions);
      if (volatile.length > 0) {
        refined.push({
          table: change.table,
          work: 'rewrite',
          why: `the default calls ${volatile.join(', ')}, which is volatile: every row gets its own value, so the table is rewritten`,
        });
      } else {
        refined.push({
          table: change.table,
          work: 'instant',
          why: 'a non-volatile default is stored once in the catalog (no rewrite)',
        });
      }
    } else if (change.kind === 'alterType') {
      const coercible = await binaryCoercible(session, change.table, change.column, change.type);
      refined.push(
        coercible && !change.using
          ? {
              table: change.table,
              work: 'instant',
              why: `${change.column} → ${change.type} is binary coercible: no rewrite`,
            }
          : {
              table: change.table,
              work: 'rewrite',
              why: `${change.column} → ${change.type} converts every value: the table and its indexes are rewritten`,
            },
      );
    } else if (change.kind === 'setNotNull') {
      const proven = await notNullProven(session, change.table, change.column);
      refined.push(
        proven
          ? {
              table: change.table,
              work: 'instant',
              why: `a validated CHECK (${change.column} IS NOT NULL) proves it: no scan`,
            }
          : { table: change.table, work: 'scan', why: `SET NOT NULL scans every row under ACCESS EXCLUSIVE` },
      );
    }
  }
  return refined;
}

async function volatileFunctions(session: DbSession, functions: readonly string[]): Promise<string[]> {
  if (functions.length === 0) return [];
  const bare = functions.map((f) => f.split('.').pop() ?? f);
  const result = await session.query<{ name: string }>(
    `SELECT DISTINCT proname AS name FROM pg_proc WHERE proname = ANY($1::text[]) AND provolatile = 'v' ORDER BY 1`,
    [bare],
  );
  return result.rows.map((r) => `${r.name}()`);
}

const VARLENA_LENGTH = new Set(['varchar', 'varbit']);

/**
 * True when PostgreSQL changes only the catalog: the same type with a modifier at least as wide
 * (varchar(10) → varchar(20), numeric(10,2) → numeric(12,2), dropping the modifier), or a
 * binary-coercible cast (varchar → text).
 */
async function binaryCoercible(session: DbSession, table: string, column: string, newType: string): Promise<boolean> {
  const result = await session.query<{ oldtype: string; oldmod: number; newtype: string | null; binary: boolean }>(
    `SELECT a.atttypid::regtype::text AS oldtype, a.atttypmod AS oldmod, to_regtype($3)::text AS newtype,
            EXISTS (SELECT 1 FROM pg_cast WHERE castsource = a.atttypid AND casttarget = to_regtype($3) AND castmethod = 'b') AS binary
     FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND NOT a.attisdropped`,
    [quoteQualified(table), column, newType],
  );
  const row = result.rows[0];
  if (!row || row.newtype === null) return false;
  const mods =
    /\(([\d,\s]+)\)/
      .exec(newType)?.[1]
      ?.split(',')
      .map((m) => Number(m.trim())) ?? [];
  const baseName = newType.replace(/\(.*$/, '').trim();
  if (row.oldtype === row.newtype) {
    if (mods.length === 0) return true;
    if (row.oldmod < 0) return false;
    if (VARLENA_LENGTH.has(baseName) || row.oldtype === 'character varying') return (mods[0] ?? 0) >= row.oldmod - 4;
    if (row.oldtype === 'numeric') {
      const precision = ((row.oldmod - 4) >> 16) & 0xffff;
      const scale = (row.oldmod - 4) & 0xffff;
      return (mods[0] ?? 0) >= precision && (mods[1] ?? 0) === scale;
    }
    return false;
  }
  // A binary-coercible cast to a type without a length limit (varchar(n) → text) keeps every value as is.
  return row.binary && mods.length === 0;
}

async function notNullProven(session: DbSession, table: string, column: string): Promise<boolean> {
  const result = await session.query<{ proven: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM pg_constraint
       WHERE conrelid = to_regclass($1) AND contype = 'c' AND convalidated
         AND regexp_replace(pg_get_constraintdef(oid), '[()"]', '', 'g') = 'CHECK ' || $2 || ' IS NOT NULL'
     ) AS proven`,
    [quoteQualified(table), column],
  );
  return result.rows[0]?.proven === true;
}
