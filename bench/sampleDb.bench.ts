// The embedded sample database: first open and reopen time, process memory after, and the longest stall
// of the calling thread's event loop (what freezes the editor when that thread is the extension host's),
// each in a fresh process:
// - in this thread, restoring the image the build ships (dist/sample-db.tar.gz, `npm run build`), as the CLI opens it;
// - in a worker thread (dist/sampleDbWorker.js), as the extension host opens it;
// - in this thread, generating it (no image: running from source, or the image of another version).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { silentLogger } from '../src/core/platform/logger';
import { openSampleDb } from '../src/core/db/sample/openSampleDb';
import { openSampleDbInWorker } from '../src/core/db/sample/sampleDbInWorker';
import { mib, report } from './stats';

const IMAGE = resolve('dist', 'sample-db.tar.gz');
const WORKER = resolve('dist', 'sampleDbWorker.js');
/** A statement of about a second on the sample database, like a heavy preview. */
const LONG_STATEMENT = 'SELECT count(*) FROM generate_series(1, 3000000) g, LATERAL (SELECT md5(g::text)) m';

type Mode = 'thread' | 'worker';

interface Run {
  ms: number;
  rss: number;
  openStall: number;
  statementMs: number;
  statementStall: number;
}

/** The longest gap between turns of this thread's event loop while `work` runs (a 5 ms timer ticking). */
async function stalled<T>(work: () => Promise<T>): Promise<{ value: T; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  try {
    const value = await work();
    stall = Math.max(stall, performance.now() - last);
    return { value, stall };
  } finally {
    clearInterval(timer);
  }
}

async function once(dir: string, imageFile: string, mode: Mode): Promise<void> {
  const start = performance.now();
  const open = () =>
    mode === 'worker'
      ? openSampleDbInWorker({ dataDir: dir, logger: silentLogger, imageFile, workerScript: WORKER })
      : openSampleDb({ dataDir: dir, logger: silentLogger, imageFile });
  const { value: db, stall: openStall } = await stalled(open);
  const ms = performance.now() - start;
  await db.query('SELECT count(*) FROM orders');
  const rss = process.memoryUsage().rss;
  const statementStart = performance.now();
  const { stall: statementStall } = await stalled(() => db.query(LONG_STATEMENT));
  const run: Run = { ms, rss, openStall, statementMs: performance.now() - statementStart, statementStall };
  process.stdout.write(JSON.stringify(run));
  await db.close();
}

function measure(label: string, imageFile: string, mode: Mode): void {
  const dir = join(mkdtempSync(join(tmpdir(), 'pgagent-sample-bench-')), 'sample-db');
  try {
    const run = () =>
      JSON.parse(
        execFileSync(process.execPath, [__filename.replace(/\.ts$/, '.cjs'), dir, imageFile, mode], {
          encoding: 'utf8',
        }),
      ) as Run;
    const first = run();
    report(`sample db: first open, ${label}`, first.ms, 'ms');
    report('  longest event-loop stall of the caller during it', first.openStall, 'ms');
    report('  RSS after first open (process)', mib(first.rss), 'MiB');
    const again = [run(), run(), run()];
    const median = (pick: (r: Run) => number) => again.map(pick).sort((a, b) => a - b)[1] ?? NaN;
    report(
      '  reopen, median of 3',
      median((r) => r.ms),
      'ms',
    );
    report('  RSS after reopen (process)', mib(again[0]?.rss ?? NaN), 'MiB');
    report(
      `  a ~1 s statement, median of 3`,
      median((r) => r.statementMs),
      'ms',
    );
    report(
      '  longest event-loop stall of the caller during it',
      median((r) => r.statementStall),
      'ms',
    );
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}

const [dirArg, imageArg, modeArg] = process.argv.slice(2);
if (dirArg && imageArg) {
  void once(dirArg, imageArg, modeArg === 'worker' ? 'worker' : 'thread');
} else {
  if (existsSync(IMAGE) && existsSync(WORKER)) {
    measure('restoring the shipped image, in this thread (CLI)', IMAGE, 'thread');
    measure('restoring the shipped image, in a worker (VS Code)', IMAGE, 'worker');
  } else report('sample db: no shipped image or worker', 'run npm run build first', '');
  measure('generating it (no image), in this thread', join(tmpdir(), 'no-such-sample-image.tar.gz'), 'thread');
}
