/**
 * The guard's own simple query in a client's upstream session (a measured transaction's READ WRITE, its
 * counters, xid, COMMIT or ROLLBACK): its answer is read here and never relayed to the client.
 */
import type { BackendMessage } from 'pg-protocol/dist/messages';

export type InBandAnswer = { rows: (string | null)[][]; error?: string; code?: string };

export class InBandQuery {
  private capture: (InBandAnswer & { done: (answer: InBandAnswer) => void }) | undefined;

  /** `settle` waits until everything sent before is answered; `send` sends a simple query upstream. */
  constructor(
    private readonly settle: () => Promise<void>,
    private readonly send: (sql: string, trailing?: Uint8Array) => void,
  ) {}

  /** Runs `sql` once everything before it is answered, and resolves at its ReadyForQuery (`trailing`: a COPY's data after it). */
  async run(sql: string, trailing?: Uint8Array): Promise<InBandAnswer> {
    await this.settle();
    return new Promise((resolve) => {
      this.capture = { rows: [], done: resolve };
      this.send(sql, trailing);
    });
  }

  /** A query of the guard's own waits for its answer (its rows must be decoded). */
  get busy(): boolean {
    return this.capture !== undefined;
  }

  /** True when these upstream messages were the answer of an in-band query (the chunk is not the client's). */
  take(messages: readonly BackendMessage[]): boolean {
    const capture = this.capture;
    if (!capture) return false;
    for (const m of messages as (BackendMessage & { fields?: (string | null)[]; message?: string; code?: string })[]) {
      if (m.name === 'dataRow' && m.fields) capture.rows.push(m.fields);
      if (m.name === 'error') {
        capture.error = m.message ?? 'error';
        if (m.code) capture.code = m.code;
      }
    }
    if (messages.some((m) => m.name === 'readyForQuery')) {
      this.capture = undefined;
      capture.done(capture);
    }
    return true;
  }

  /** The upstream is gone: a waiting query ends with an error. */
  abandon(): void {
    this.capture?.done({ rows: [], error: 'the upstream session ended' });
    this.capture = undefined;
  }
}
