/** Plain data describing a database's structure, shared by core, the CLI and the panel. */

export type RelationKind = 'table' | 'partitioned_table' | 'view' | 'materialized_view' | 'foreign_table';

/** pg_constraint's referential actions, spelled as in SQL. */
export type ReferentialAction = 'NO ACTION' | 'RESTRICT' | 'CASCADE' | 'SET NULL' | 'SET DEFAULT';

export interface ColumnInfo {
  name: string;
  /** format_type(): "numeric(10,2)", "timestamp with time zone", "text[]". */
  type: string;
  nullable: boolean;
  default: string | null;
  comment: string | null;
  /** A few of the column's most common values (only when sample values are enabled; see introspectSchema). */
  samples?: string[];
  /** The values the schema itself allows: enum labels, or string literals of a CHECK constraint on the column (`status IN ('paid', ...)`). */
  allowedValues?: string[];
  /**
   * Words of the column's values as the planner's statistics know them (pg_stats most common values and
   * histogram bounds, when readable): used to link a question's words to the column, never shown to a model.
   */
  valueWords?: string[];
}

export interface ForeignKeyInfo {
  name: string;
  columns: string[];
  references: { schema: string; table: string; columns: string[] };
  onDelete: ReferentialAction;
  onUpdate: ReferentialAction;
}

export interface IndexInfo {
  name: string;
  unique: boolean;
  primary: boolean;
  /** pg_get_indexdef(): the CREATE INDEX statement. */
  definition: string;
}

export interface TriggerInfo {
  name: string;
  enabled: boolean;
  /** pg_get_triggerdef(): the CREATE TRIGGER statement. */
  definition: string;
}

export interface TableInfo {
  schema: string;
  name: string;
  kind: RelationKind;
  comment: string | null;
  /** The partitioned table this one is a partition of. */
  partitionOf?: { schema: string; table: string };
  /** Planner's estimate (pg_class.reltuples); null when never analyzed or not a stored relation. */
  rowEstimate: number | null;
  columns: ColumnInfo[];
  primaryKey: string[] | null;
  uniqueConstraints: string[][];
  foreignKeys: ForeignKeyInfo[];
  /** Foreign keys of other tables (or of this one) pointing to it, when any: read with it, so one table answers both ways. */
  referencedBy?: IncomingForeignKey[];
  indexes: IndexInfo[];
  triggers: TriggerInfo[];
}

export interface IncomingForeignKey {
  schema: string;
  table: string;
  columns: string[];
  onDelete: ReferentialAction;
}

export interface SchemaSnapshot {
  database: string;
  serverVersion: string;
  tables: TableInfo[];
}
