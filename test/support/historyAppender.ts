/**
 * A process appending to a query history, for the concurrency test: waits for the go file, then appends
 * `count` entries (SQL of ~3 KB, so nearly every write is one line) and exits (the exit flushes the rest).
 * argv: dir, writer name, count, maxBytes, go file.
 */
import { existsSync } from 'node:fs';
import { HistoryLog } from '../../src/core/sql/history/historyLog';

const [dir = '', writer = '', count = '0', maxBytes = '0', go = ''] = process.argv.slice(2);
const log = new HistoryLog(dir, { maxBytes: Number(maxBytes), keep: 1000, delayMs: 1 });
while (!existsSync(go)) await new Promise((resolve) => setTimeout(resolve, 2));
const padding = 'x'.repeat(3000);
for (let i = 0; i < Number(count); i++) {
  log.append({
    at: new Date().toISOString(),
    db: 'localhost:5432/i33b_concurrency',
    origin: 'cli',
    who: writer,
    kind: 'read',
    sql: `SELECT ${i} /* ${writer} ${padding} */`,
    ms: 0.1,
    rows: 1,
    status: 'ok',
  });
  if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
}
