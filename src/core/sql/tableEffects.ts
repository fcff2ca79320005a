/**
 * Per-table effects of what ran in the current transaction, read from pg_stat_xact_user_tables (which,
 * unlike rowCount, counts foreign-key cascades and trigger writes), and attributed to the statement
 * itself, a foreign key action, or a trigger.
 */
import type { DbSession } from '../db/db';
import type { ForeignKeyActionFired, TableEffect, TriggerFired } from '../../shared/impactReport';

interface Counters {
  schema: string;
  name: string;
  inserted: number;
  updated: number;
  deleted: number;
}

export type StatSnapshot = Map<number, Counters>;

/** The transaction's counters so far; diff two snapshots to get what happened in between. */
export async function readXactStats(session: DbSession): Promise<StatSnapshot> {
  const result = await session.query<{
    relid: number;
    schema: string;
    name: string;
    ins: number;
    upd: number;
    del: number;
  }>(
    `SELECT relid::int8::float8 AS relid, schemaname AS schema, relname AS name,
            n_tup_ins::float8 AS ins, n_tup_upd::float8 AS upd, n_tup_del::float8 AS del
     FROM pg_stat_xact_user_tables
     -- Temporary tables (ours and the statement's own) are gone at the end of the session.
     WHERE schemaname NOT LIKE 'pg\\_temp%'`,
  );
  return new Map(
    result.rows.map((r) => [
      r.relid,
      { schema: r.schema, name: r.name, inserted: r.ins, updated: r.upd, deleted: r.del },
    ]),
  );
}

export interface ChangedTable extends Counters {
  relid: number;
}

export function diffStats(before: StatSnapshot, after: StatSnapshot): ChangedTable[] {
  const changed: ChangedTable[] = [];
  for (const [relid, now] of after) {
    const then = before.get(relid);
    const inserted = now.inserted - (then?.inserted ?? 0);
    const updated = now.updated - (then?.updated ?? 0);
    const deleted = now.deleted - (then?.deleted ?? 0);
    if (inserted > 0 || updated > 0 || deleted > 0)
      changed.push({ relid, schema: now.schema, name: now.name, inserted, updated, deleted });
  }
  return changed.sort((a, b) => `${a.schema}.${a.name}`.localeCompare(`${b.schema}.${b.name}`));
}

/** Adds the counts of `extra` (e.g. rows a TRUNCATE removed, which the statistics do not count). */
export function mergeCounts(changed: ChangedTable[], extra: ChangedTable[]): ChangedTable[] {
  const byRelid = new Map(changed.map((c) => [c.relid, { ...c }]));
  for (const e of extra) {
    const c = byRelid.get(e.relid);
    if (c) {
      c.inserted += e.inserted;
      c.updated += e.updated;
      c.deleted += e.deleted;
    } else byRelid.set(e.relid, { ...e });
  }
  return [...byRelid.values()];
}

export interface Attribution {
  tables: TableEffect[];
  foreignKeyActions: ForeignKeyActionFired[];
  triggers: TriggerFired[];
}

const FK_ACTIONS: Record<string, string> = { c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

/** `schema.name` or `name` as the parser gave them (case kept), quoted for use in SQL. */
export function quoteQualified(name: string): string {
  return name
    .split('.')
    .map((part) => `"${part.replace(/"/g, '""')}"`)
    .join('.');
}

/** Names of tables (as written, resolved with the session's search_path) to their OIDs. */
export async function resolveTables(session: DbSession, names: readonly string[]): Promise<number[]> {
  if (names.length === 0) return [];
  const result = await session.query<{ oid: number | null }>(
    'SELECT to_regclass(n)::oid::int8::float8 AS oid FROM unnest($1::text[]) AS n',
    [names.map(quoteQualified)],
  );
  return result.rows.map((r) => r.oid).filter((oid): oid is number => oid !== null);
}

/**
 * Direct = a table the statements target; cascade = reached from a direct table through foreign keys
 * whose ON DELETE/UPDATE action changes rows; trigger = any other changed table.
 */
export async function attributeEffects(
  session: DbSession,
  changed: readonly ChangedTable[],
  directRelids: readonly number[],
  ignoreTriggers: readonly string[] = [],
): Promise<Attribution> {
  const relids = changed.map((c) => c.relid);
  const byRelid = new Map(changed.map((c) => [c.relid, c]));
  const fks = await session.query<{
    name: string;
    child: number;
    parent: number;
    on_delete: string;
    on_update: string;
  }>(
    `SELECT conname AS name, conrelid::int8::float8 AS child, confrelid::int8::float8 AS parent,
            confdeltype::text AS on_delete, confupdtype::text AS on_update
     FROM pg_constraint WHERE contype = 'f' AND conrelid = ANY($1::float8[]::int8[]::oid[]) AND confrelid = ANY($1::float8[]::int8[]::oid[])`,
    [relids],
  );
  const direct = new Set(directRelids.filter((r) => byRelid.has(r)));
  const cascade = new Set<number>();
  const foreignKeyActions: ForeignKeyActionFired[] = [];
  const queue = [...direct];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    const p = byRelid.get(parent);
    if (!p) continue;
    for (const fk of fks.rows.filter((f) => f.parent === parent)) {
      const action =
        p.deleted > 0 && FK_ACTIONS[fk.on_delete]
          ? `ON DELETE ${FK_ACTIONS[fk.on_delete]}`
          : p.updated > 0 && FK_ACTIONS[fk.on_update]
            ? `ON UPDATE ${FK_ACTIONS[fk.on_update]}`
            : undefined;
      const child = byRelid.get(fk.child);
      if (!action || !child) continue;
      foreignKeyActions.push({
        constraint: fk.name,
        table: `${child.schema}.${child.name}`,
        references: `${p.schema}.${p.name}`,
        action,
      });
      if (!direct.has(fk.child) && !cascade.has(fk.child)) {
        cascade.add(fk.child);
        queue.push(fk.child);
      }
    }
  }

  const triggerRows = await session.query<{ relid: number; name: string; type: number }>(
    `SELECT tgrelid::int8::float8 AS relid, tgname AS name, tgtype::int AS type FROM pg_trigger
     WHERE NOT tgisinternal AND tgenabled <> 'D' AND tgrelid = ANY($1::float8[]::int8[]::oid[]) ORDER BY tgname`,
    [relids],
  );
  const triggers: TriggerFired[] = [];
  for (const t of triggerRows.rows) {
    const c = byRelid.get(t.relid);
    if (!c || ignoreTriggers.includes(t.name)) continue;
    // pg_trigger.tgtype bits: 4 INSERT, 8 DELETE, 16 UPDATE.
    const fires =
      ((t.type & 4) !== 0 && c.inserted > 0) ||
      ((t.type & 8) !== 0 && c.deleted > 0) ||
      ((t.type & 16) !== 0 && c.updated > 0);
    if (fires) triggers.push({ table: `${c.schema}.${c.name}`, name: t.name });
  }

  const tables = changed.map((c): TableEffect => ({
    schema: c.schema,
    name: c.name,
    via: direct.has(c.relid) ? 'direct' : cascade.has(c.relid) ? 'cascade' : 'trigger',
    inserted: c.inserted,
    updated: c.updated,
    deleted: c.deleted,
  }));
  const order = { direct: 0, cascade: 1, trigger: 2 } as const;
  tables.sort((a, b) => order[a.via] - order[b.via] || `${a.schema}.${a.name}`.localeCompare(`${b.schema}.${b.name}`));
  return { tables, foreignKeyActions, triggers };
}
