/** The Db interface over PGlite (PostgreSQL compiled to WASM, in this process). */
import type { PGlite, Results } from '@electric-sql/pglite';
import { OneAtATime } from './oneAtATime';
import type { Db, DbResult, DbSession, DbTextResult } from './db';
import { queryError } from './dbErrors';
import { withOnlySession } from './sessionReset';

type Parsers = Record<number, (value: string) => string>;

export class PgliteDb implements Db {
  readonly kind = 'pglite' as const;
  private readonly queue = new OneAtATime();
  /** An identity parser for every type OID, so text mode gets PostgreSQL's text form (built once). */
  private textParsers: Parsers | undefined;
  private readonly session: DbSession = {
    query: <Row>(sql: string, params?: readonly unknown[]) => this.run<Row>(sql, params),
    queryText: (sql: string, params?: readonly unknown[]) => this.runText(sql, params),
  };

  constructor(
    private readonly pglite: PGlite,
    readonly label: string,
  ) {}

  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<DbResult<Row>> {
    return this.queue.run(() => this.run<Row>(sql, params));
  }

  queryText(sql: string, params?: readonly unknown[]): Promise<DbTextResult> {
    return this.queue.run(() => this.runText(sql, params));
  }

  /**
   * PGlite is a single connection: a session holds it exclusively so no other caller's statement lands
   * inside its transaction.
   */
  withSession<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    return withOnlySession(this.queue, this.session, work);
  }

  async close(): Promise<void> {
    await this.queue.idle();
    if (!this.pglite.closed) await this.pglite.close();
  }

  private async run<Row>(sql: string, params: readonly unknown[] | undefined): Promise<DbResult<Row>> {
    try {
      return toResult(await this.pglite.query<Row>(sql, params ? [...params] : undefined));
    } catch (error) {
      throw queryError(error, this.label);
    }
  }

  private async runText(sql: string, params: readonly unknown[] | undefined): Promise<DbTextResult> {
    try {
      if (!this.textParsers) {
        const types = await this.pglite.query<{ oid: number }>('SELECT oid::int AS oid FROM pg_type');
        const identity = (value: string) => value;
        this.textParsers = Object.fromEntries(
          types.rows.map((t): [number, (value: string) => string] => [t.oid, identity]),
        );
      }
      return toResult(
        await this.pglite.query<(string | null)[]>(sql, params ? [...params] : undefined, {
          rowMode: 'array',
          parsers: this.textParsers,
        }),
      );
    } catch (error) {
      throw queryError(error, this.label);
    }
  }
}

function toResult<Row>(result: Results<Row>): DbResult<Row> {
  return {
    fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    rows: result.rows,
    // PGlite counts only INSERT/UPDATE/DELETE/MERGE/COPY rows; for a SELECT the count is its rows.
    rowCount: result.affectedRows || result.rows.length,
  };
}
