// The cost a statement pays to be in the query history (core/sql/history): the append on the statement's path
// (a push onto the queue), and the whole cost with the writes to disk included, against a peer: an appendFileSync
// of the same line per statement (what a naive history would do). Target: < 0.1 ms per statement.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HistoryEntry } from '../src/core/sql/history/historyEntry';
import { historyLine } from '../src/core/sql/history/historyEntry';
import { HistoryLog } from '../src/core/sql/history/historyLog';
import { queryHistory } from '../src/core/sql/history/queryHistory';
import { report } from './stats';

const N = 50_000;
const dir = mkdtempSync(join(tmpdir(), 'history-bench-'));
const sql = 'SELECT id, name, email FROM customers WHERE id = 42';

function main(): void {
  const log = new HistoryLog(join(dir, 'ours'), { delayMs: 25 });
  const history = queryHistory(log, 'guard', 'bench');
  const record = (i: number) =>
    history.record('alice (app@127.0.0.1:5432/shop)', {
      kind: 'read',
      sql: `${sql} /* ${i} */`,
      startedAt: Date.now(),
      ms: null,
      rows: null,
    });
  for (let i = 0; i < 2_000; i++) record(i);
  log.flush();

  let start = performance.now();
  for (let i = 0; i < N; i++) record(i);
  const onPath = (performance.now() - start) / N;
  start = performance.now();
  log.flush();
  const withWrite = onPath + (performance.now() - start) / N;
  log.close();

  const file = join(dir, 'peer.jsonl');
  const entry: HistoryEntry = {
    at: new Date().toISOString(),
    db: '127.0.0.1:5432/shop',
    origin: 'guard',
    who: 'bench',
    kind: 'read',
    sql,
    ms: null,
    rows: null,
    status: 'ok',
  };
  start = performance.now();
  for (let i = 0; i < N / 10; i++) appendFileSync(file, historyLine({ ...entry, sql: `${sql} /* ${i} */` }));
  const peer = (performance.now() - start) / (N / 10);

  report('history append on the statement path (per statement)', onPath * 1000, 'µs');
  report('history append incl. its share of the disk writes', withWrite * 1000, 'µs');
  report('peer: appendFileSync of the line per statement', peer * 1000, 'µs');
  report('ours vs peer (whole cost)', peer / withWrite, '× faster');
  rmSync(dir, { recursive: true, force: true });
}

main();
