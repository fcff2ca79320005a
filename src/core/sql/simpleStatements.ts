/**
 * Statements whose verdict needs no look at their fields (SPEC §5.1): CREATE DOMAIN, CREATE ROLE, LISTEN, …,
 * each with its class, the reason a person reads, and whether it is refused or destructive.
 */
import type { SqlClass } from './classification';
import type { Rec } from './parseTree';
import type { State } from './ruleState';
import { hold, NOT_IN_TRANSACTION, refuse } from './ruleState';

/** [class, reason, flags] of statements whose verdict does not depend on their fields. */
export type Simple = readonly [SqlClass, string, ('refuse' | 'destructive' | 'both')?];

export const SIMPLE = new Map<string, Simple>([
  ['CreateStmt', ['ddl', 'CREATE TABLE creates a table']],
  ['CreateSeqStmt', ['ddl', 'CREATE SEQUENCE creates a sequence']],
  ['AlterSeqStmt', ['ddl', 'ALTER SEQUENCE changes a sequence']],
  ['CreateSchemaStmt', ['ddl', 'CREATE SCHEMA creates a schema']],
  ['AlterFunctionStmt', ['ddl', 'ALTER FUNCTION changes a routine']],
  ['CreateExtensionStmt', ['ddl', 'CREATE EXTENSION installs an extension']],
  ['AlterExtensionStmt', ['ddl', 'ALTER EXTENSION updates an extension']],
  ['AlterExtensionContentsStmt', ['ddl', 'ALTER EXTENSION changes what an extension contains']],
  ['CreateDomainStmt', ['ddl', 'CREATE DOMAIN creates a domain']],
  ['AlterDomainStmt', ['ddl', 'ALTER DOMAIN changes a domain']],
  ['CompositeTypeStmt', ['ddl', 'CREATE TYPE creates a type']],
  ['CreateEnumStmt', ['ddl', 'CREATE TYPE creates an enum type']],
  ['CreateRangeStmt', ['ddl', 'CREATE TYPE creates a range type']],
  ['AlterTypeStmt', ['ddl', 'ALTER TYPE changes a type']],
  ['DefineStmt', ['ddl', 'CREATE creates a type, operator, aggregate or similar object']],
  ['CreateTrigStmt', ['ddl', 'CREATE TRIGGER makes later writes run a function']],
  ['AlterObjectSchemaStmt', ['ddl', 'SET SCHEMA moves an object to another schema']],
  ['AlterObjectDependsStmt', ['ddl', 'DEPENDS ON EXTENSION changes dependencies']],
  ['AlterOperatorStmt', ['ddl', 'ALTER OPERATOR changes an operator']],
  ['CommentStmt', ['ddl', 'COMMENT changes the comment of an object']],
  ['SecLabelStmt', ['ddl', 'SECURITY LABEL changes a security label']],
  ['GrantStmt', ['ddl', 'GRANT/REVOKE changes privileges']],
  ['CreatePolicyStmt', ['ddl', 'CREATE POLICY changes row-level security']],
  ['AlterPolicyStmt', ['ddl', 'ALTER POLICY changes row-level security']],
  ['CreateStatsStmt', ['ddl', 'CREATE STATISTICS creates extended statistics']],
  ['AlterStatsStmt', ['ddl', 'ALTER STATISTICS changes extended statistics']],
  ['CreateCastStmt', ['ddl', 'CREATE CAST creates a cast']],
  ['CreateConversionStmt', ['ddl', 'CREATE CONVERSION creates an encoding conversion']],
  ['CreateTransformStmt', ['ddl', 'CREATE TRANSFORM creates a transform']],
  ['CreateOpClassStmt', ['ddl', 'CREATE OPERATOR CLASS creates an operator class']],
  ['CreateOpFamilyStmt', ['ddl', 'CREATE OPERATOR FAMILY creates an operator family']],
  ['AlterOpFamilyStmt', ['ddl', 'ALTER OPERATOR FAMILY changes an operator family']],
  ['CreateAmStmt', ['ddl', 'CREATE ACCESS METHOD creates an access method']],
  ['CreatePLangStmt', ['ddl', 'CREATE LANGUAGE installs a procedural language']],
  ['AlterCollationStmt', ['ddl', 'ALTER COLLATION changes a collation']],
  ['AlterTSDictionaryStmt', ['ddl', 'ALTER TEXT SEARCH DICTIONARY changes a dictionary']],
  ['AlterTSConfigurationStmt', ['ddl', 'ALTER TEXT SEARCH CONFIGURATION changes a configuration']],
  ['CreateFdwStmt', ['ddl', 'CREATE FOREIGN DATA WRAPPER creates a wrapper']],
  ['AlterFdwStmt', ['ddl', 'ALTER FOREIGN DATA WRAPPER changes a wrapper']],
  ['CreateForeignServerStmt', ['ddl', 'CREATE SERVER creates a foreign server']],
  ['AlterForeignServerStmt', ['ddl', 'ALTER SERVER changes a foreign server']],
  ['CreateForeignTableStmt', ['ddl', 'CREATE FOREIGN TABLE creates a foreign table']],
  ['CreateUserMappingStmt', ['ddl', 'CREATE USER MAPPING stores remote credentials']],
  ['AlterUserMappingStmt', ['ddl', 'ALTER USER MAPPING changes remote credentials']],
  ['DropUserMappingStmt', ['ddl', 'DROP USER MAPPING drops remote credentials', 'destructive']],
  ['ImportForeignSchemaStmt', ['ddl', 'IMPORT FOREIGN SCHEMA creates foreign tables']],
  ['CreatePublicationStmt', ['ddl', 'CREATE PUBLICATION publishes tables for replication']],
  ['AlterPublicationStmt', ['ddl', 'ALTER PUBLICATION changes a publication']],
  ['CreateRoleStmt', ['admin', 'CREATE ROLE creates a role']],
  ['AlterRoleStmt', ['admin', 'ALTER ROLE changes a role']],
  ['AlterRoleSetStmt', ['admin', 'ALTER ROLE … SET changes the defaults of a role']],
  ['DropRoleStmt', ['admin', 'DROP ROLE drops a role', 'destructive']],
  ['GrantRoleStmt', ['admin', 'GRANT/REVOKE changes role membership']],
  ['AlterDefaultPrivilegesStmt', ['admin', 'ALTER DEFAULT PRIVILEGES changes privileges of future objects']],
  ['ReassignOwnedStmt', ['admin', 'REASSIGN OWNED changes the owner of every object of a role']],
  ['DropOwnedStmt', ['admin', 'DROP OWNED drops every object of a role', 'destructive']],
  ['CheckPointStmt', ['admin', 'CHECKPOINT forces a checkpoint of the server']],
  ['AlterTableSpaceOptionsStmt', ['admin', 'ALTER TABLESPACE changes a tablespace']],
  ['AlterTableMoveAllStmt', ['admin', 'ALTER … ALL IN TABLESPACE moves every relation of a tablespace']],
  ['CreateEventTrigStmt', ['admin', 'CREATE EVENT TRIGGER runs a function on every DDL command']],
  ['AlterEventTrigStmt', ['admin', 'ALTER EVENT TRIGGER changes an event trigger']],
  ['AlterDatabaseSetStmt', ['admin', 'ALTER DATABASE … SET changes the defaults of a database']],
  ['AlterDatabaseRefreshCollStmt', ['admin', 'ALTER DATABASE … REFRESH COLLATION VERSION changes a database']],
  ['CreatedbStmt', ['admin', `CREATE DATABASE ${NOT_IN_TRANSACTION}`, 'refuse']],
  ['DropdbStmt', ['admin', `DROP DATABASE ${NOT_IN_TRANSACTION}`, 'both']],
  ['AlterSystemStmt', ['admin', `ALTER SYSTEM ${NOT_IN_TRANSACTION}`, 'refuse']],
  ['CreateTableSpaceStmt', ['admin', `CREATE TABLESPACE ${NOT_IN_TRANSACTION}`, 'refuse']],
  ['DropTableSpaceStmt', ['admin', `DROP TABLESPACE ${NOT_IN_TRANSACTION}`, 'both']],
  ['LoadStmt', ['admin', 'LOAD loads a shared library into the server process', 'refuse']],
  ['CreateSubscriptionStmt', ['admin', 'CREATE SUBSCRIPTION creates a remote slot no rollback undoes', 'refuse']],
  ['DropSubscriptionStmt', ['admin', 'DROP SUBSCRIPTION drops a remote slot no rollback undoes', 'both']],
  ['RefreshMatViewStmt', ['write', 'REFRESH MATERIALIZED VIEW replaces the contents of a materialized view']],
  ['LockStmt', ['write', 'LOCK TABLE locks tables until the end of the transaction']],
  ['DeclareCursorStmt', ['session', 'DECLARE opens a cursor in this session']],
  ['FetchStmt', ['session', 'FETCH/MOVE moves a cursor of this session']],
  ['ClosePortalStmt', ['session', 'CLOSE closes a cursor of this session']],
  ['DeallocateStmt', ['session', 'DEALLOCATE drops prepared statements of this session']],
  ['ListenStmt', ['session', 'LISTEN subscribes this session to notifications']],
  ['UnlistenStmt', ['session', 'UNLISTEN changes the notifications this session gets']],
  ['NotifyStmt', ['session', 'NOTIFY sends a notification to listening sessions']],
  ['ConstraintsSetStmt', ['session', 'SET CONSTRAINTS changes when constraints are checked']],
  ['DoStmt', ['unknown', 'DO runs a procedural code block the classifier cannot see into']],
  ['CallStmt', ['unknown', 'CALL runs a procedure whose effects the classifier cannot see']],
  ['ExecuteStmt', ['unknown', 'EXECUTE runs a prepared statement whose text the classifier cannot see']],
  ['PLAssignStmt', ['unknown', 'a PL/pgSQL assignment is not a statement the agent runs']],
]);

export function applySimple([cls, reason, flags]: Simple, n: Rec, st: State): void {
  // AlterDomainStmt subtypes X and N are DROP CONSTRAINT and DROP NOT NULL.
  const dropsFromDomain = reason.startsWith('ALTER DOMAIN') && (n.subtype === 'X' || n.subtype === 'N');
  if (flags === 'destructive' || flags === 'both' || dropsFromDomain) st.destructive = true;
  if (flags === 'refuse' || flags === 'both') refuse(st, cls, reason);
  else hold(st, cls, reason);
}
