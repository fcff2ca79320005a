/** The Db interface over PGlite (PostgreSQL compiled to WASM, in this process). */
import type { PGlite } from '@electric-sql/pglite';
import type { Db, DbResult, DbSession } from './db';
import { queryError } from './dbErrors';

export class PgliteDb implements Db {
  readonly kind = 'pglite' as const;

  constructor(
    private readonly pglite: PGlite,
    readonly label: string,
  ) {}

  /** Settles when the work queued so far has finished; never rejects. */
  private tail: Promise<unknown> = Promise.resolve();

  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<DbResult<Row>> {
    return this.exclusive(() => runQuery<Row>(this.pglite, sql, params, this.label));
  }

  /**
   * PGlite is a single connection: a session holds it exclusively so no other caller's statement lands
   * inside its transaction.
   */
  withSession<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    return this.exclusive(() =>
      work({ query: <Row>(sql: string, params?: readonly unknown[]) => runQuery<Row>(this.pglite, sql, params, this.label) }),
    );
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.tail;
    if (!this.pglite.closed) await this.pglite.close();
  }
}

async function runQuery<Row>(
  pglite: PGlite,
  sql: string,
  params: readonly unknown[] | undefined,
  label: string,
): Promise<DbResult<Row>> {
  try {
    const result = await pglite.query<Row>(sql, params ? [...params] : undefined);
    return {
      fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
      rows: result.rows,
      rowCount: result.affectedRows ?? result.rows.length,
    };
  } catch (error) {
    throw queryError(error, label);
  }
}
