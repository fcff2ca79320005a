/**
 * What a schema diff compares: a database's structure as plain data (tables and columns from the project's
 * introspection; schemas, enums, sequences, named constraints, indexes and views from our own catalog read),
 * and the snapshot file that holds one (`pg-agent diff --from A --snapshot FILE`), read back with a check.
 */
import { z } from 'zod';
import type { SchemaSnapshot } from '../../shared/schema';
import { AgentError } from '../platform/errors';

export const SNAPSHOT_FORMAT = 'pg-agent-schema-snapshot';

export interface DiffColumn {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  /** pg_attribute.attidentity of an identity column: a GENERATED ALWAYS, d BY DEFAULT (absent: none). */
  identity?: 'a' | 'd';
}

export interface DiffTable {
  schema: string;
  name: string;
  partitioned: boolean;
  columns: DiffColumn[];
}

export interface DiffConstraint {
  schema: string;
  table: string;
  name: string;
  /** pg_constraint.contype: p primary key, u unique, c check, f foreign key, x exclusion. */
  type: 'p' | 'u' | 'c' | 'f' | 'x';
  /** pg_get_constraintdef(): "FOREIGN KEY (a) REFERENCES s.t(id)", "CHECK ((x > 0))". */
  definition: string;
}

export interface DiffIndex {
  schema: string;
  table: string;
  name: string;
  /** pg_get_indexdef(): the CREATE INDEX statement. */
  definition: string;
}

export interface DiffView {
  schema: string;
  name: string;
  materialized: boolean;
  /** pg_get_viewdef(): the SELECT. */
  definition: string;
}

export interface DiffEnum {
  schema: string;
  name: string;
  labels: string[];
}

export interface DiffSequence {
  schema: string;
  name: string;
  type: string;
  start: string;
  increment: string;
}

export interface DiffFunction {
  schema: string;
  name: string;
  /** pg_get_function_identity_arguments(): "a integer, b text"; with the name, the function's signature. */
  args: string;
  /** pg_proc.prokind: f function, p procedure. */
  kind: 'f' | 'p';
  language: string;
  /** pg_get_function_result(): what CREATE OR REPLACE cannot change. */
  result: string | null;
  /** pg_get_functiondef(): the whole CREATE OR REPLACE statement. */
  definition: string;
}

export interface DiffTrigger {
  schema: string;
  table: string;
  name: string;
  /** pg_get_triggerdef(): the CREATE TRIGGER statement. */
  definition: string;
}

export interface DiffGrant {
  kind: 'table' | 'sequence' | 'schema' | 'function';
  schema: string;
  /** The object's name (a schema's own name for kind schema). */
  name: string;
  /** A function's identity arguments; '' otherwise. */
  args: string;
  /** A role's name, or PUBLIC. */
  grantee: string;
  /** SELECT, INSERT, USAGE, EXECUTE, … */
  privilege: string;
  grantable: boolean;
}

export interface DiffSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  version: 1;
  database: string;
  schemas: string[];
  enums: DiffEnum[];
  sequences: DiffSequence[];
  tables: DiffTable[];
  constraints: DiffConstraint[];
  indexes: DiffIndex[];
  views: DiffView[];
  /** Functions and procedures, in creation order (absent in snapshots written before they were read). */
  functions?: DiffFunction[];
  triggers?: DiffTrigger[];
  /** Privileges granted to roles other than the object's owner (the defaults included, e.g. PUBLIC EXECUTE). */
  grants?: DiffGrant[];
}

/**
 * A diff snapshot from the introspection's own snapshot alone (keys, FKs and indexes as it describes them; no
 * checks, views, enums or sequences): what the benchmark's 2,000-table fixture gives.
 */
export function fromIntrospection(snapshot: SchemaSnapshot): DiffSnapshot {
  const stored = snapshot.tables.filter((t) => t.kind === 'table' || t.kind === 'partitioned_table');
  const q = (names: readonly string[]) => names.map((n) => `"${n.replace(/"/g, '""')}"`).join(', ');
  return {
    format: SNAPSHOT_FORMAT,
    version: 1,
    database: snapshot.database,
    schemas: [...new Set(stored.map((t) => t.schema))].sort(),
    enums: [],
    sequences: [],
    tables: stored.map((t) => ({
      schema: t.schema,
      name: t.name,
      partitioned: t.kind === 'partitioned_table',
      columns: t.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable, default: c.default })),
    })),
    constraints: stored.flatMap((t) =>
      [
        ...(t.primaryKey
          ? [{ type: 'p' as const, name: `${t.name}_pkey`, definition: `PRIMARY KEY (${q(t.primaryKey)})` }]
          : []),
        ...t.uniqueConstraints.map((cols) => ({
          type: 'u' as const,
          name: `${t.name}_${cols.join('_')}_key`,
          definition: `UNIQUE (${q(cols)})`,
        })),
        ...t.foreignKeys.map((fk) => ({
          type: 'f' as const,
          name: fk.name,
          definition: `FOREIGN KEY (${q(fk.columns)}) REFERENCES ${q([fk.references.schema])}.${q([fk.references.table])}(${q(fk.references.columns)})${fk.onDelete === 'NO ACTION' ? '' : ` ON DELETE ${fk.onDelete}`}`,
        })),
      ].map((c) => ({ ...c, schema: t.schema, table: t.name })),
    ),
    indexes: stored.flatMap((t) =>
      t.indexes
        .filter((i) => !i.primary && !i.unique)
        .map((i) => ({ schema: t.schema, table: t.name, name: i.name, definition: i.definition })),
    ),
    views: [],
  };
}

const named = { schema: z.string(), name: z.string() };
const snapshotSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.literal(1),
  database: z.string(),
  schemas: z.array(z.string()),
  enums: z.array(z.object({ ...named, labels: z.array(z.string()) })),
  sequences: z.array(z.object({ ...named, type: z.string(), start: z.string(), increment: z.string() })),
  tables: z.array(
    z.object({
      ...named,
      partitioned: z.boolean(),
      columns: z.array(
        z.object({
          name: z.string(),
          type: z.string(),
          nullable: z.boolean(),
          default: z.string().nullable(),
          identity: z.enum(['a', 'd']).optional(),
        }),
      ),
    }),
  ),
  constraints: z.array(
    z.object({ ...named, table: z.string(), type: z.enum(['p', 'u', 'c', 'f', 'x']), definition: z.string() }),
  ),
  indexes: z.array(z.object({ ...named, table: z.string(), definition: z.string() })),
  views: z.array(z.object({ ...named, materialized: z.boolean(), definition: z.string() })),
  functions: z
    .array(
      z.object({
        ...named,
        args: z.string(),
        kind: z.enum(['f', 'p']),
        language: z.string(),
        result: z.string().nullable(),
        definition: z.string(),
      }),
    )
    .optional(),
  triggers: z.array(z.object({ ...named, table: z.string(), definition: z.string() })).optional(),
  grants: z
    .array(
      z.object({
        ...named,
        kind: z.enum(['table', 'sequence', 'schema', 'function']),
        args: z.string(),
        grantee: z.string(),
        privilege: z.string(),
        grantable: z.boolean(),
      }),
    )
    .optional(),
});

/** A snapshot file's text, checked: BAD_INPUT says what is wrong with it. */
export function parseSnapshotFile(text: string, file: string): DiffSnapshot {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError(
      'BAD_INPUT',
      `${file} is not JSON: ${(error as Error).message}.`,
      'Write it again with pg-agent diff --from DB --snapshot FILE.',
    );
  }
  const parsed = snapshotSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentError(
      'BAD_INPUT',
      `${file} is not a pg-agent schema snapshot (${issue ? `${issue.path.join('.') || 'top'}: ${issue.message}` : 'unknown shape'}).`,
      'Write it with pg-agent diff --from DB --snapshot FILE.',
    );
  }
  return parsed.data;
}
