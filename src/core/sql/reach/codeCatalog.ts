/**
 * What the database's own code is (SPEC §5 1a), read in one round trip (codeCatalogSql.ts) and indexed for the
 * lookups the reach walker makes: functions by oid and by name, operators by name, casts by type, user types by
 * name, relations by name with everything that runs when they are read or written.
 */
import type { Db, DbSession } from '../../db/db';
import { CATALOG_SQL, JIT_OFF_SQL, JIT_ON_SQL, JIT_SETTING_SQL } from './codeCatalogSql';

export interface CodeFunction {
  oid: number;
  schema: string;
  name: string;
  /** pg_get_function_identity_arguments: "integer, text". */
  args: string;
  language: string;
  /** f function, p procedure, a aggregate, w window. */
  kind: string;
  volatility: string;
  /** The body of a LANGUAGE sql function (empty for a SQL-standard BEGIN ATOMIC body). */
  src: string | null;
  /** pg_get_functiondef, for PL/pgSQL and BEGIN ATOMIC SQL functions. */
  def: string | null;
  config: string[];
  securityDefiner: boolean;
  /** The extension it belongs to (pg_depend 'e'). */
  extension: string | null;
  /** In pg_catalog or information_schema: judged by name, never parsed. */
  builtin: boolean;
  /** An aggregate's support functions (transition, final, combine, …). */
  aggregateParts: number[];
  /** Default values of its arguments ("evil(), 1"): they run when a call leaves them out. */
  argumentDefaults: string | null;
}

export interface CodeOperator {
  schema: string;
  name: string;
  left: string | null;
  right: string | null;
  code: number;
}

export interface CodeCast {
  source: number;
  target: number;
  func: number;
  /** e explicit, a assignment, i implicit. */
  context: string;
  /** The target type's name (pg_type.typname), as a cast in a parse tree names it. */
  targetName: string;
}

export interface CodeType {
  oid: number;
  schema: string;
  name: string;
  /** b base, d domain, r range. */
  type: string;
  /** Input, output, receive and send functions (and a range's canonical and subtype_diff functions). */
  io: number[];
  baseType: number | null;
  /** A domain's CHECK expressions (VALUE is the value checked). */
  checks: string[];
}

export interface CodeColumn {
  name: string;
  defaultExpr: string | null;
  generated: boolean;
  typeOid: number;
  /** The sequence an identity column advances. */
  identitySequence: string | null;
  /** Sequences the default depends on, qualified ("public.t_id_seq"): how its nextval('t_id_seq') is named. */
  defaultSequences: string[];
}

export interface CodeForeignKey {
  name: string;
  /** The table holding the key (it gets the action). */
  referencing: CodeRelation;
  /** c cascade, n set null, d set default; a, r: nothing runs. */
  onDelete: string;
  onUpdate: string;
}

export interface CodeTrigger {
  name: string;
  func: number;
  /** pg_trigger.tgtype: 1 row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate, 64 instead. */
  type: number;
  /** pg_get_triggerdef, only for triggers with a WHEN condition (it runs too). */
  def: string | null;
}

export interface CodeRule {
  name: string;
  /** 2 UPDATE, 3 INSERT, 4 DELETE. */
  event: string;
  def: string;
}

export interface CodePolicy {
  name: string;
  /** r SELECT, a INSERT, w UPDATE, d DELETE, * ALL. */
  command: string;
  using: string | null;
  withCheck: string | null;
}

export interface CodeRelation {
  oid: number;
  schema: string;
  name: string;
  /** r table, p partitioned, v view, m matview, f foreign. */
  kind: string;
  rowSecurity: boolean;
  viewDef: string | null;
  columns: CodeColumn[];
  checks: string[];
  /** FKs of other tables that reference this one. */
  referencedBy: CodeForeignKey[];
  policies: CodePolicy[];
  indexes: CodeIndex[];
  triggers: CodeTrigger[];
  rules: CodeRule[];
  /** Partitions and inheritance children: writes to this table reach theirs. */
  children: CodeRelation[];
}

export interface CodeIndex {
  /** pg_get_indexdef, when the index has expressions or a predicate. */
  def: string | null;
  /** User operator classes it uses (oids into CodeCatalog.opclasses). */
  opclasses: number[];
}

export interface CodeOpclass {
  schema: string;
  name: string;
  /** Support functions and operator functions of its family. */
  functions: number[];
}

export interface CodeEventTrigger {
  name: string;
  event: string;
  func: number;
  tags: string[] | null;
}

export interface CodeCatalog {
  functions: Map<number, CodeFunction>;
  /** Non-built-in functions by lower-case name. */
  functionsByName: Map<string, CodeFunction[]>;
  operatorsByName: Map<string, CodeOperator[]>;
  castsByTargetName: Map<string, CodeCast[]>;
  castsBySource: Map<number, CodeCast[]>;
  types: Map<number, CodeType>;
  typesByName: Map<string, CodeType[]>;
  relations: Map<number, CodeRelation>;
  relationsByName: Map<string, CodeRelation[]>;
  eventTriggers: CodeEventTrigger[];
  opclasses: Map<number, CodeOpclass>;
}

type Row = unknown[];
interface CatalogRow {
  functions: Row[] | null;
  operators: Row[] | null;
  casts: Row[] | null;
  types: Row[] | null;
  relations: Row[] | null;
  columns: Row[] | null;
  constraints: Row[] | null;
  policies: Row[] | null;
  indexes: Row[] | null;
  triggers: Row[] | null;
  rules: Row[] | null;
  event_triggers: Row[] | null;
  inherits: Row[] | null;
  opclasses: Row[] | null;
}

/**
 * The catalog query with JIT compilation off: on a large catalog the planner's estimates of the catalog's joins
 * pass jit_above_cost, and compiling the query cost 9 s of its 12 s at 50,000 tables. On a pool the session is
 * pinned (and reset after); a caller's own session gets its setting back.
 */
async function readCatalog(session: DbSession): Promise<Record<string, unknown>[]> {
  const before = await session.query<{ before: string }>(JIT_SETTING_SQL);
  const wasOn = before.rows[0]?.before === 'on';
  if (wasOn) await session.query(JIT_OFF_SQL);
  try {
    return (await session.query<Record<string, unknown>>(CATALOG_SQL)).rows;
  } finally {
    // In a transaction that failed, the setting goes back with it (SET is transactional).
    if (wasOn) await session.query(JIT_ON_SQL).catch(() => undefined);
  }
}

/** Reads the catalog in one query. Throws what the query throws (the caller turns it into an unknown verdict). */
export async function loadCodeCatalog(session: DbSession | Db): Promise<CodeCatalog> {
  const rows = 'withSession' in session ? await session.withSession(readCatalog) : await readCatalog(session);
  const row = rows[0] ?? {};
  const json = (key: keyof CatalogRow): Row[] => {
    const value = row[key];
    // PGlite and pg both decode json columns; text is parsed in case a driver leaves it as a string.
    const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
    return Array.isArray(parsed) ? (parsed as Row[]) : [];
  };
  return buildCatalog({
    functions: json('functions'),
    operators: json('operators'),
    casts: json('casts'),
    types: json('types'),
    relations: json('relations'),
    columns: json('columns'),
    constraints: json('constraints'),
    policies: json('policies'),
    indexes: json('indexes'),
    triggers: json('triggers'),
    rules: json('rules'),
    event_triggers: json('event_triggers'),
    inherits: json('inherits'),
    opclasses: json('opclasses'),
  });
}

export function emptyCatalog(): CodeCatalog {
  return buildCatalog({
    functions: [],
    operators: [],
    casts: [],
    types: [],
    relations: [],
    columns: [],
    constraints: [],
    policies: [],
    indexes: [],
    triggers: [],
    rules: [],
    event_triggers: [],
    inherits: [],
    opclasses: [],
  });
}

const n = (value: unknown): number => Number(value ?? 0);
const s = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
const sn = (value: unknown): string | null => (value === null || value === undefined ? null : s(value));
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function buildCatalog(rows: Record<keyof CatalogRow, Row[]>): CodeCatalog {
  const catalog: CodeCatalog = {
    functions: new Map(),
    functionsByName: new Map(),
    operatorsByName: new Map(),
    castsByTargetName: new Map(),
    castsBySource: new Map(),
    types: new Map(),
    typesByName: new Map(),
    relations: new Map(),
    relationsByName: new Map(),
    eventTriggers: [],
    opclasses: new Map(),
  };
  for (const r of rows.functions) {
    const fn: CodeFunction = {
      oid: n(r[0]),
      schema: s(r[1]),
      name: s(r[2]),
      args: s(r[3]),
      language: s(r[4]),
      kind: s(r[5]),
      volatility: s(r[6]),
      src: sn(r[7]),
      def: sn(r[8]),
      config: strings(r[9]),
      securityDefiner: r[10] === true,
      extension: sn(r[11]),
      builtin: r[12] === true,
      aggregateParts: Array.isArray(r[13]) ? r[13].map(n) : [],
      argumentDefaults: sn(r[14]),
    };
    catalog.functions.set(fn.oid, fn);
    if (!fn.builtin) push(catalog.functionsByName, fn.name.toLowerCase(), fn);
  }
  for (const r of rows.operators) {
    push(catalog.operatorsByName, s(r[2]), {
      schema: s(r[1]),
      name: s(r[2]),
      left: sn(r[3]),
      right: sn(r[4]),
      code: n(r[5]),
    });
  }
  for (const r of rows.casts) {
    const cast: CodeCast = { source: n(r[0]), target: n(r[1]), func: n(r[2]), context: s(r[3]), targetName: s(r[4]) };
    push(catalog.castsByTargetName, cast.targetName.toLowerCase(), cast);
    push(catalog.castsBySource, cast.source, cast);
  }
  for (const r of rows.types) {
    const checks = Array.isArray(r[6]) ? r[6].map(String) : [];
    const type: CodeType = {
      oid: n(r[0]),
      schema: s(r[1]),
      name: s(r[2]),
      type: s(r[3]),
      io: Array.isArray(r[4]) ? r[4].map(n) : [],
      baseType: r[5] === null ? null : n(r[5]),
      checks,
    };
    catalog.types.set(type.oid, type);
    push(catalog.typesByName, type.name.toLowerCase(), type);
  }
  for (const r of rows.relations) {
    const rel: CodeRelation = {
      oid: n(r[0]),
      schema: s(r[1]),
      name: s(r[2]),
      kind: s(r[3]),
      rowSecurity: r[4] === true,
      viewDef: sn(r[5]),
      columns: [],
      checks: [],
      referencedBy: [],
      policies: [],
      indexes: [],
      triggers: [],
      rules: [],
      children: [],
    };
    catalog.relations.set(rel.oid, rel);
    push(catalog.relationsByName, rel.name.toLowerCase(), rel);
  }
  const rel = (oid: unknown): CodeRelation | undefined => catalog.relations.get(n(oid));
  for (const r of rows.columns) {
    rel(r[0])?.columns.push({
      name: s(r[1]),
      defaultExpr: sn(r[2]),
      generated: r[3] === 's',
      typeOid: n(r[4]),
      identitySequence: sn(r[5]),
      defaultSequences: strings(r[6]),
    });
  }
  for (const r of rows.constraints) {
    const table = rel(r[0]);
    if (!table) continue;
    if (r[2] === 'c' && r[3] !== null) table.checks.push(s(r[3]));
    if (r[2] === 'f')
      rel(r[4])?.referencedBy.push({ name: s(r[1]), referencing: table, onDelete: s(r[5]), onUpdate: s(r[6]) });
  }
  for (const r of rows.policies) {
    rel(r[0])?.policies.push({ name: s(r[1]), command: s(r[2]), using: sn(r[3]), withCheck: sn(r[4]) });
  }
  for (const r of rows.indexes)
    rel(r[0])?.indexes.push({ def: sn(r[1]), opclasses: Array.isArray(r[2]) ? r[2].map(n) : [] });
  for (const r of rows.opclasses) {
    catalog.opclasses.set(n(r[0]), {
      schema: s(r[1]),
      name: s(r[2]),
      functions: Array.isArray(r[3]) ? r[3].map(n) : [],
    });
  }
  for (const r of rows.triggers)
    rel(r[0])?.triggers.push({ name: s(r[1]), func: n(r[2]), type: n(r[3]), def: sn(r[4]) });
  for (const r of rows.rules) rel(r[0])?.rules.push({ name: s(r[1]), event: s(r[2]), def: s(r[3]) });
  for (const r of rows.event_triggers) {
    catalog.eventTriggers.push({
      name: s(r[0]),
      event: s(r[1]),
      func: n(r[2]),
      tags: Array.isArray(r[3]) ? r[3].map(String) : null,
    });
  }
  for (const r of rows.inherits) {
    const child = rel(r[0]);
    if (child) rel(r[1])?.children.push(child);
  }
  return catalog;
}

/** "public.f(integer)" */
export function functionLabel(fn: CodeFunction): string {
  return `${fn.schema}.${fn.name}(${fn.args})`;
}

export function relationLabel(rel: CodeRelation): string {
  return `${rel.schema}.${rel.name}`;
}
