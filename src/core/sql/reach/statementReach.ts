/**
 * What a statement node runs beyond its expressions (SPEC §5 1a): the code behind the tables it writes
 * (tableEvents.ts), matview refreshes, event triggers for DDL; and, inside a function body, what the
 * statement itself does (a write, DDL, a lock, a session setting, COPY … PROGRAM, transaction control).
 */
import { chain } from './reachFound';
import type { WalkCtx, WalkEngine, WriteEvent, WriteOptions } from './walkPort';
import type { Rec } from '../parseTree';
import { arr, isRec, objectLabel, rec, str } from '../parseTree';

/** Statements whose inner trees are stored, not run, when the statement runs. */
export const SKIP_CHILDREN = new Set([
  'CreateFunctionStmt',
  'ViewStmt',
  'RuleStmt',
  'CreateTrigStmt',
  'CreatePolicyStmt',
  'AlterPolicyStmt',
  'PrepareStmt',
  'CreateDomainStmt',
  'AlterFunctionStmt',
  'DoStmt',
  'CommentStmt',
]);

/** Statements that are not DDL (no event trigger fires for them). */
const NOT_DDL = new Set([
  'SelectStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'CopyStmt',
  'TransactionStmt',
  'VariableSetStmt',
  'VariableShowStmt',
  'ExplainStmt',
  'PrepareStmt',
  'ExecuteStmt',
  'DeallocateStmt',
  'ListenStmt',
  'UnlistenStmt',
  'NotifyStmt',
  'CallStmt',
  'DoStmt',
  'LockStmt',
  'DeclareCursorStmt',
  'FetchStmt',
  'ClosePortalStmt',
  'DiscardStmt',
  'LoadStmt',
  'CheckPointStmt',
  'VacuumStmt',
  'ClusterStmt',
  'ConstraintsSetStmt',
  'ReturnStmt',
  'PLAssignStmt',
  'TruncateStmt',
  // Shared objects of the whole server: event triggers do not fire for them.
  'CreateRoleStmt',
  'AlterRoleStmt',
  'AlterRoleSetStmt',
  'DropRoleStmt',
  'GrantRoleStmt',
  'CreatedbStmt',
  'DropdbStmt',
  'AlterDatabaseStmt',
  'AlterDatabaseSetStmt',
  'AlterDatabaseRefreshCollStmt',
  'CreateTableSpaceStmt',
  'DropTableSpaceStmt',
  'AlterTableSpaceOptionsStmt',
  'AlterSystemStmt',
]);

/** In a body: statements that leave state ROLLBACK does not undo. */
const BODY_IRREVERSIBLE: Record<string, string> = {
  TransactionStmt: 'ends or splits the transaction (transaction control)',
  ListenStmt: 'listens for notifications in the session (LISTEN)',
  UnlistenStmt: "changes the session's notification listeners (UNLISTEN)",
  NotifyStmt: 'sends a notification to other sessions (NOTIFY)',
  DiscardStmt: 'discards session state (DISCARD)',
  PrepareStmt: 'prepares a statement in the session (PREPARE)',
  DeallocateStmt: 'drops a prepared statement of the session (DEALLOCATE)',
  LoadStmt: 'loads a shared library into the server process (LOAD)',
  CheckPointStmt: 'forces a server checkpoint (CHECKPOINT)',
  AlterSystemStmt: "changes the server's configuration file (ALTER SYSTEM)",
  CreateRoleStmt: 'creates a role',
  AlterRoleStmt: 'changes a role',
  AlterRoleSetStmt: "changes a role's settings",
  DropRoleStmt: 'drops a role',
  GrantRoleStmt: 'grants or revokes role membership',
  CreatedbStmt: 'creates a database',
  DropdbStmt: 'drops a database',
  AlterDatabaseStmt: 'changes a database',
  AlterDatabaseSetStmt: "changes a database's settings",
  CreateTableSpaceStmt: 'creates a tablespace',
  DropTableSpaceStmt: 'drops a tablespace',
};
const BODY_UNKNOWN: Record<string, string> = {
  ExecuteStmt: 'runs a prepared statement it cannot see (EXECUTE)',
};
/** In a body: harmless to run (reads, cursors, local settings are handled below). */
const BODY_HARMLESS = new Set([
  'SelectStmt',
  'VariableShowStmt',
  'ExplainStmt',
  'CallStmt',
  'DeclareCursorStmt',
  'FetchStmt',
  'ClosePortalStmt',
  'ConstraintsSetStmt',
  'ReturnStmt',
  'PLAssignStmt',
  'DoStmt',
]);

export function onStatement(engine: WalkEngine, kind: string, node: Rec, ctx: WalkCtx): void {
  switch (kind) {
    case 'InsertStmt':
      write(engine, node, ['INSERT'], ctx, { givenColumns: insertColumns(node) });
      if (str(rec(node, 'onConflictClause'), 'action') === 'ONCONFLICT_UPDATE')
        write(engine, node, ['UPDATE'], ctx, {});
      break;
    case 'UpdateStmt':
      write(engine, node, ['UPDATE'], ctx, { defaultColumns: setToDefault(node) });
      break;
    case 'DeleteStmt':
      write(engine, node, ['DELETE'], ctx, {});
      break;
    case 'MergeStmt':
      write(engine, node, ['INSERT', 'UPDATE', 'DELETE'], ctx, {});
      break;
    case 'TruncateStmt': {
      const cascade = str(node, 'behavior') === 'DROP_CASCADE';
      for (const item of arr(node, 'relations')) {
        const rv = rec(item, 'RangeVar');
        if (rv) for (const rel of engine.relationsNamed(rv)) engine.applyWrite(rel, 'TRUNCATE', ctx, { cascade });
      }
      break;
    }
    case 'CopyStmt':
      if (node.is_from === true && isRec(node.relation)) {
        for (const rel of engine.relationsNamed(node.relation)) engine.applyWrite(rel, 'INSERT', ctx, {});
      }
      break;
    case 'VacuumStmt':
    case 'ReindexStmt':
    case 'ClusterStmt': {
      // They evaluate index expressions (ANALYZE samples them, REINDEX and CLUSTER rebuild): of the tables
      // named, or of every table when none is.
      const named =
        kind === 'VacuumStmt'
          ? arr(node, 'rels').map((r) => rec(rec(r, 'VacuumRelation'), 'relation'))
          : [rec(node, 'relation')];
      const rels = named.some((r) => r !== undefined)
        ? named.flatMap((r) => (r ? engine.relationsNamed(r) : []))
        : [...engine.catalog.relations.values()];
      for (const rel of rels) engine.reachIndexes(rel, ctx);
      break;
    }
    case 'RefreshMatViewStmt':
      if (isRec(node.relation)) {
        for (const rel of engine.relationsNamed(node.relation)) {
          engine.readRelation(rel, ctx, 'refresh of materialized view');
          engine.applyWrite(rel, 'INSERT', ctx, {});
        }
      }
      break;
  }
  if (ctx.found.body) bodyProblem(kind, node, ctx);
  // SELECT … INTO creates a table: DDL for event triggers (tag SELECT INTO).
  if (!NOT_DDL.has(kind) || (kind === 'SelectStmt' && isRec(node.intoClause))) eventTriggers(engine, kind, node, ctx);
}

function write(engine: WalkEngine, node: Rec, events: WriteEvent[], ctx: WalkCtx, options: WriteOptions): void {
  if (!isRec(node.relation)) return;
  for (const rel of engine.relationsNamed(node.relation)) {
    for (const event of events) engine.applyWrite(rel, event, ctx, options);
  }
}

function insertColumns(node: Rec): Set<string> | undefined {
  const cols = arr(node, 'cols');
  if (cols.length === 0) return undefined;
  // DEFAULT in VALUES runs the default even for a listed column: then count it as not given.
  if (JSON.stringify(node.selectStmt ?? null).includes('"SetToDefault"')) return undefined;
  return new Set(cols.map((c) => str(rec(c, 'ResTarget'), 'name') ?? ''));
}

function setToDefault(node: Rec): Set<string> {
  const columns = new Set<string>();
  for (const target of arr(node, 'targetList')) {
    const res = rec(target, 'ResTarget');
    if (res && JSON.stringify(res.val ?? null).includes('"SetToDefault"')) columns.add(str(res, 'name') ?? '');
  }
  return columns;
}

function bodyProblem(kind: string, node: Rec, ctx: WalkCtx): void {
  const found = ctx.found;
  const irreversible = BODY_IRREVERSIBLE[kind];
  const unknown = BODY_UNKNOWN[kind];
  if (irreversible !== undefined) found.problem('irreversible', irreversible);
  else if (unknown !== undefined) found.problem('unknown', unknown);
  else if (kind === 'InsertStmt' || kind === 'UpdateStmt' || kind === 'DeleteStmt' || kind === 'MergeStmt') {
    const verb = {
      InsertStmt: 'INSERT INTO',
      UpdateStmt: 'UPDATE',
      DeleteStmt: 'DELETE FROM',
      MergeStmt: 'MERGE INTO',
    }[kind];
    found.problem('write', `runs ${verb} ${relationText(node.relation)}`);
  } else if (kind === 'CopyStmt') {
    if (node.is_program === true) found.problem('irreversible', 'runs COPY … PROGRAM (a shell command on the server)');
    else if (typeof node.filename === 'string')
      found.problem('irreversible', "runs COPY with a file on the server (reads or writes the server's files)");
    else if (node.is_from === true) found.problem('write', `runs COPY ${relationText(node.relation)} FROM STDIN`);
  } else if (kind === 'VariableSetStmt') {
    if (node.is_local !== true && str(node, 'kind') !== 'VAR_SET_MULTI') {
      found.problem('irreversible', `changes the session setting ${str(node, 'name') ?? 'all'} (SET without LOCAL)`);
    }
  } else if (kind === 'LockStmt') {
    const tables = arr(node, 'relations')
      .map((r) => relationText(rec(r, 'RangeVar')))
      .join(', ');
    found.problem('ddl', `locks ${tables} (LOCK TABLE)`);
  } else if (kind === 'SelectStmt') {
    if (isRec(node.intoClause)) found.problem('ddl', 'creates a table (SELECT INTO)');
  } else if (!BODY_HARMLESS.has(kind)) {
    found.problem('ddl', `runs ${commandTag(kind, node) ?? kind.replace(/Stmt$/, '')}`);
  }
}

function relationText(rv: unknown): string {
  if (!isRec(rv)) return '?';
  const name = str(rv, 'relname') ?? '?';
  const schema = str(rv, 'schemaname');
  return schema === undefined ? name : `${schema}.${name}`;
}

/** Event triggers whose event and tag filter match the DDL command (when the tag is unsure, they match). */
function eventTriggers(engine: WalkEngine, kind: string, node: Rec, ctx: WalkCtx): void {
  const tag = commandTag(kind, node);
  for (const trigger of engine.catalog.eventTriggers) {
    if (trigger.event === 'sql_drop' && !/^(Drop|Alter)/.test(kind)) continue;
    if (trigger.event === 'table_rewrite' && !/^(Alter|Cluster|Vacuum)/.test(kind)) continue;
    if (tag !== undefined && trigger.tags !== null && !trigger.tags.some((t) => t.toUpperCase() === tag)) continue;
    engine.reachFunctionOid(trigger.func, chain(ctx.via, `event trigger ${trigger.name} (${trigger.event})`), ctx);
  }
}

const SIMPLE_TAGS: Record<string, string> = {
  CreateStmt: 'CREATE TABLE',
  IndexStmt: 'CREATE INDEX',
  ViewStmt: 'CREATE VIEW',
  CreateSeqStmt: 'CREATE SEQUENCE',
  AlterSeqStmt: 'ALTER SEQUENCE',
  CreateSchemaStmt: 'CREATE SCHEMA',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  CreateTrigStmt: 'CREATE TRIGGER',
  CreatePolicyStmt: 'CREATE POLICY',
  AlterPolicyStmt: 'ALTER POLICY',
  CreateExtensionStmt: 'CREATE EXTENSION',
  AlterExtensionStmt: 'ALTER EXTENSION',
  CommentStmt: 'COMMENT',
  CreateDomainStmt: 'CREATE DOMAIN',
  AlterDomainStmt: 'ALTER DOMAIN',
  CreateEnumStmt: 'CREATE TYPE',
  CompositeTypeStmt: 'CREATE TYPE',
  CreateRangeStmt: 'CREATE TYPE',
  RuleStmt: 'CREATE RULE',
  CreateCastStmt: 'CREATE CAST',
  CreateForeignTableStmt: 'CREATE FOREIGN TABLE',
  CreateEventTrigStmt: 'CREATE EVENT TRIGGER',
  ReindexStmt: 'REINDEX',
  CreateStatsStmt: 'CREATE STATISTICS',
  ImportForeignSchemaStmt: 'IMPORT FOREIGN SCHEMA',
  SecLabelStmt: 'SECURITY LABEL',
  AlterEnumStmt: 'ALTER TYPE',
  AlterTypeStmt: 'ALTER TYPE',
  TruncateStmt: 'TRUNCATE TABLE',
  VacuumStmt: 'VACUUM',
  ClusterStmt: 'CLUSTER',
};
/** Object types whose tag is "DROP <label>" / "ALTER <label>" exactly; others give no tag (assume a match). */
const TAGGED_OBJECTS = new Set([
  'OBJECT_TABLE',
  'OBJECT_INDEX',
  'OBJECT_VIEW',
  'OBJECT_MATVIEW',
  'OBJECT_SEQUENCE',
  'OBJECT_FUNCTION',
  'OBJECT_PROCEDURE',
  'OBJECT_SCHEMA',
  'OBJECT_TYPE',
  'OBJECT_DOMAIN',
  'OBJECT_TRIGGER',
  'OBJECT_POLICY',
  'OBJECT_EXTENSION',
  'OBJECT_FOREIGN_TABLE',
  'OBJECT_RULE',
]);
const objectTag = (verb: string, objtype: unknown): string | undefined =>
  typeof objtype === 'string' && TAGGED_OBJECTS.has(objtype) ? `${verb} ${objectLabel(objtype)}` : undefined;

/** PostgreSQL's command tag for a DDL node ("CREATE TABLE"), or undefined when unsure. */
export function commandTag(kind: string, node: Rec): string | undefined {
  const simple = SIMPLE_TAGS[kind];
  if (simple !== undefined) return simple;
  switch (kind) {
    case 'SelectStmt':
      return isRec(node.intoClause) ? 'SELECT INTO' : undefined;
    case 'CreateFunctionStmt':
      return node.is_procedure === true ? 'CREATE PROCEDURE' : 'CREATE FUNCTION';
    case 'CreateTableAsStmt':
      return str(node, 'objtype') === 'OBJECT_MATVIEW'
        ? 'CREATE MATERIALIZED VIEW'
        : node.is_select_into === true
          ? 'SELECT INTO'
          : 'CREATE TABLE AS';
    case 'GrantStmt':
      return node.is_grant === true ? 'GRANT' : 'REVOKE';
    case 'DropStmt':
      return objectTag('DROP', node.removeType);
    case 'AlterTableStmt':
      return objectTag('ALTER', node.objtype);
    default:
      return undefined;
  }
}
