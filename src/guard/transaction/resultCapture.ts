/**
 * What the server returned to each recorded statement of a measured transaction (its RETURNING rows, a
 * recorded `SELECT nextval(…)`), read from the upstream's messages as they are relayed: the source of the
 * values a later statement may carry that the server produced (varyingValues.ts, "returned").
 *
 * The answers come in the order the requests went upstream. Each request that yields a result while measuring
 * is expected here (`expect`), the recorded statement's index or none (a read passed on, not recorded); its
 * rows are the DataRows until its end: CommandComplete, an error or a suspended portal (Execute), or the
 * ReadyForQuery of a simple query. The guard's own in-band queries run only when nothing is pending (they
 * settle first), so their rows never land in a slot.
 */
import type { BackendMessage } from 'pg-protocol/dist/messages';

/** A statement's returned rows: its column names and each row's values as text (null: NULL or binary). */
export interface ReturnedRows {
  columns: string[];
  rows: (string | null)[][];
}

/** Rows and values kept per statement: enough for ids passed on, bounded for a bulk RETURNING. */
const MAX_ROWS = 100;
const MAX_VALUE_LENGTH = 256;

interface Slot {
  statement: number | undefined;
  /** 'query': a simple query, ended by its ReadyForQuery; 'execute': one portal's run. */
  kind: 'query' | 'execute';
}

export class ResultCapture {
  private readonly slots: Slot[] = [];
  private readonly returned = new Map<number, ReturnedRows>();
  private columns: string[] = [];

  /** A request went upstream whose answer carries rows; `statement`: its recorded index, if recorded. */
  expect(statement: number | undefined, kind: Slot['kind']): void {
    this.slots.push({ statement, kind });
  }

  /** Every upstream message batch, in order (UpstreamHooks.observe). */
  observe(messages: readonly BackendMessage[]): void {
    for (const message of messages) {
      switch (message.name) {
        case 'rowDescription':
          this.columns = (message as BackendMessage & { fields: { name: string }[] }).fields.map((f) => f.name);
          break;
        case 'dataRow':
          this.row((message as BackendMessage & { fields: (string | null)[] }).fields);
          break;
        case 'commandComplete':
        case 'emptyQuery':
        case 'portalSuspended':
        case 'error':
          this.columns = [];
          if (this.slots[0]?.kind === 'execute') this.slots.shift();
          break;
        case 'readyForQuery':
          // A simple query ends here (an Execute skipped after an error leaves the transaction aborted: nothing of it commits).
          if (this.slots[0]?.kind === 'query') this.slots.shift();
          this.columns = [];
          break;
        default:
          break;
      }
    }
  }

  /** What statement `index` returned (undefined: nothing, or not recorded). */
  rowsOf(index: number): ReturnedRows | undefined {
    return this.returned.get(index);
  }

  get all(): ReadonlyMap<number, ReturnedRows> {
    return this.returned;
  }

  clear(): void {
    this.slots.length = 0;
    this.returned.clear();
    this.columns = [];
  }

  private row(fields: (string | null)[]): void {
    const statement = this.slots[0]?.statement;
    if (statement === undefined) return;
    const rows = this.returned.get(statement) ?? { columns: this.columns, rows: [] };
    this.returned.set(statement, rows);
    if (rows.rows.length >= MAX_ROWS) return;
    rows.rows.push(fields.map((f) => (typeof f === 'string' && f.length <= MAX_VALUE_LENGTH ? f : null)));
  }
}
