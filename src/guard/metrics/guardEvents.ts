/**
 * What a guard tells its operator about each client: a line when its session starts and ends (address, guard
 * user, how long, how many statements) and one per statement (verdict, ticket, the guard's time on it), into
 * the metrics (guardMetrics.ts) and the log (guardLog.ts: JSON lines; in text format, info lines shown with
 * --verbose). No statement text and no parameter value is ever part of them.
 */
import type { LogFields, Logger } from '../../core/platform/logger';
import type { GuardMetrics } from './guardMetrics';
import { jsonLine } from '../../core/platform/logger';
import type { LogSink } from './guardLog';
import { StatementTracker } from './statementTracker';

export interface ClientRef {
  /** The guard's number for the client (as `guard status` shows it). */
  id: number;
  user: string;
  /** HOST:PORT the client connects from. */
  address: string;
}

export class GuardEvents {
  constructor(private readonly out: { metrics?: GuardMetrics; json?: LogSink; logger: Logger }) {}

  /** A client authenticated: its session line, and the tracker of its statements. */
  client(ref: ClientRef): ClientEvents {
    this.out.metrics?.sessionStarted();
    this.log('session.start', { client: ref.address, clientId: ref.id, user: ref.user });
    return new ClientEvents(this, ref);
  }

  /** @internal */
  log(event: string, record: LogFields): void {
    if (this.out.json) this.out.json.line(jsonLine('info', { event, ...record }));
    else this.out.logger.info(`guard ${event}`, record);
  }

  /** @internal */
  statement(
    ref: ClientRef,
    verdict: Parameters<GuardMetrics['statement']>[0],
    seconds: number,
    record: LogFields,
  ): void {
    this.out.metrics?.statement(verdict, seconds);
    this.log('statement', { client: ref.address, clientId: ref.id, user: ref.user, verdict, ...record });
  }
}

const ms = (seconds: number): number => Math.round(seconds * 1_000_000) / 1000;

export class ClientEvents {
  readonly statements: StatementTracker;
  private readonly since = performance.now();
  private ended = false;

  constructor(
    private readonly events: GuardEvents,
    private readonly ref: ClientRef,
  ) {
    this.statements = new StatementTracker((e) =>
      events.statement(ref, e.verdict, e.seconds, { ticket: e.ticket, ms: ms(e.seconds), protocol: e.protocol }),
    );
  }

  /** The client is gone (once). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.events.log('session.end', {
      client: this.ref.address,
      clientId: this.ref.id,
      user: this.ref.user,
      ms: ms((performance.now() - this.since) / 1000),
      statements: this.statements.count,
    });
  }
}
