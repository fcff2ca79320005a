/**
 * The one database interface the rest of core uses, so a PostgreSQL server (`pg`) and the embedded
 * sample database (PGlite) are interchangeable.
 */

export type DbKind = 'postgres' | 'pglite';

export interface DbField {
  name: string;
  /** PostgreSQL type OID (pg_type.oid). */
  dataTypeID: number;
  /** RowDescription's other facts, where the driver gives them (the guard relays a statement's own row description). */
  tableID?: number;
  columnID?: number;
  dataTypeSize?: number;
  dataTypeModifier?: number;
}

export interface DbResult<Row = Record<string, unknown>> {
  fields: DbField[];
  rows: Row[];
  /** Rows affected or returned, as PostgreSQL reports it (null for statements without a count). */
  rowCount: number | null;
}

/** Rows as PostgreSQL's own text form of each value (null for SQL NULL), in field order. */
export interface DbTextResult {
  fields: DbField[];
  rows: (string | null)[][];
  rowCount: number | null;
}

/** Queries on one dedicated connection, in order: what transactions and SET LOCAL need. */
export interface DbSession {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<DbResult<Row>>;
  /** The same query with every value left in PostgreSQL's text form, so nothing is lost to JS types. */
  queryText(sql: string, params?: readonly unknown[]): Promise<DbTextResult>;
}

export interface Db extends DbSession {
  readonly kind: DbKind;
  /** How the connection is shown to a person: "sample (PGlite)", "app@db.example.com:5432/shop". */
  readonly label: string;
  /** The SSH tunnel the connection goes through, when it has one (a status bar shows whether it is up). */
  readonly tunnel?: TunnelStatus;
  /** Runs `work` on one connection held for its whole duration, then gives the connection back. */
  withSession<T>(work: (session: DbSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface TunnelStatus {
  /** "deploy@bastion.example.com:22", jump hosts first. */
  readonly route: string;
  readonly state: 'down' | 'connecting' | 'up';
  /** Called on every change of state; returns the unsubscribe. */
  onState(listener: (state: 'down' | 'connecting' | 'up') => void): () => void;
}
