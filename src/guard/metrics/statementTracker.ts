/**
 * One client's statements as the metrics and the log count them. The session tells what happened (a
 * judgement, a ticket held or run); the guard's message loop tells when each message began and ended. A
 * statement ends at a simple Query, an extended Execute, a CopyDone, or a Sync after a judgement that no
 * Execute followed (a refused Parse); its verdict is what happened since the previous one ended.
 */
import type { Verdict } from '../judge/judge';

export const STATEMENT_VERDICTS = ['passed', 'held', 'executed', 'refused', 'failed', 'measured', 'other'] as const;
export type StatementVerdict = (typeof STATEMENT_VERDICTS)[number];

export interface StatementEvent {
  verdict: StatementVerdict;
  ticket?: string;
  seconds: number;
  protocol: 'simple' | 'extended' | 'copy';
}

/** Message type bytes (frontend). */
const QUERY = 0x51;
const EXECUTE = 0x45;
const SYNC = 0x53;
const COPY_DONE = 0x63;

export class StatementTracker {
  private started: number | undefined;
  private verdict: Verdict['kind'] | 'failed' | undefined;
  private ticket: { id: string; executed: boolean } | undefined;
  /** Statements ended so far (the session's line counts them). */
  count = 0;

  constructor(private readonly emit: (event: StatementEvent) => void) {}

  judged(kind: Verdict['kind'] | 'failed'): void {
    this.verdict = kind;
  }

  held(ticket: string): void {
    this.ticket = { id: ticket, executed: false };
  }

  executed(ticket: string): void {
    this.ticket = { id: ticket, executed: true };
  }

  /** A client message begins. */
  begin(): void {
    this.started ??= performance.now();
  }

  /** That message was handled (`type`: its first byte). */
  end(type: number | undefined): void {
    const pending = this.verdict !== undefined || this.ticket !== undefined;
    if (type === QUERY) this.flush('simple');
    else if (type === EXECUTE) this.flush('extended');
    else if (type === COPY_DONE && pending) this.flush('copy');
    else if (type === SYNC && pending) this.flush('extended');
    else if (type === SYNC) this.started = undefined;
  }

  private flush(protocol: StatementEvent['protocol']): void {
    const seconds = this.started === undefined ? 0 : (performance.now() - this.started) / 1000;
    const ticket = this.ticket;
    const verdict: StatementVerdict = ticket
      ? ticket.executed
        ? 'executed'
        : 'held'
      : verdictOf(this.verdict, protocol);
    this.started = undefined;
    this.verdict = undefined;
    this.ticket = undefined;
    this.count++;
    this.emit({ verdict, seconds, protocol, ...(ticket ? { ticket: ticket.id } : {}) });
  }
}

/**
 * No ticket: what the judgement said. Nothing judged: an Execute of a portal judged at its Parse passed; a simple
 * query not judged is the guard's own answer (its commands, an aborted transaction, COMMIT of a measured one).
 */
function verdictOf(
  kind: Verdict['kind'] | 'failed' | undefined,
  protocol: StatementEvent['protocol'],
): StatementVerdict {
  switch (kind) {
    case 'hold':
      return 'measured';
    case 'refuse':
    case 'syntax':
      return 'refused';
    case 'failed':
      return 'failed';
    case 'pass':
      return 'passed';
    case undefined:
      return protocol === 'simple' ? 'other' : 'passed';
  }
}
