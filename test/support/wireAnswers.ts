// What the guard answers on a raw socket, message by message: for tests that write the wire protocol themselves.
import type net from 'node:net';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';

/** What the guard answers on a raw socket: each message's name (an error's code, a DataRow's first value). */
export class Answers {
  private readonly parser = new Parser();
  private seen: string[] = [];
  private waiting: { ready: number; resolve: (seen: string[]) => void } | undefined;

  constructor(socket: net.Socket) {
    // node-postgres' own reading stops: the bytes from here on are this test's.
    socket.removeAllListeners('data');
    socket.on('data', (chunk: Buffer) => {
      this.parser.parse(chunk, (message: BackendMessage) => this.seen.push(label(message)));
      this.check();
    });
  }

  /** The messages up to the `ready`th ReadyForQuery from now. */
  until(ready: number): Promise<string[]> {
    return new Promise((resolve) => {
      this.waiting = { ready, resolve };
      this.check();
    });
  }

  private check(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    let count = 0;
    const end = this.seen.findIndex((name) => name === 'readyForQuery' && ++count === waiting.ready);
    if (end < 0) return;
    this.waiting = undefined;
    waiting.resolve(this.seen.slice(0, end + 1));
    this.seen = this.seen.slice(end + 1);
  }
}

function label(message: BackendMessage): string {
  if (message.name === 'error') return `error ${(message as BackendMessage & { code: string }).code}`;
  if (message.name === 'dataRow') return `row ${String((message as BackendMessage & { fields: unknown[] }).fields[0])}`;
  return message.name;
}
