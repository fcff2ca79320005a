// The embedded sample database: first open (generation) and reopen time, and process memory after,
// each in a fresh process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../src/core/logger';
import { openSampleDb } from '../src/core/db/sample/openSampleDb';
import { mib, report } from './stats';

async function once(dir: string): Promise<void> {
  const start = performance.now();
  const db = await openSampleDb({ dataDir: dir, logger: silentLogger });
  const ms = performance.now() - start;
  await db.query('SELECT count(*) FROM orders');
  process.stdout.write(JSON.stringify({ ms, rss: process.memoryUsage().rss }));
  await db.close();
}

if (process.argv[2]) {
  void once(process.argv[2]);
} else {
  const dir = join(mkdtempSync(join(tmpdir(), 'pgagent-sample-bench-')), 'sample-db');
  try {
    const run = () => JSON.parse(execFileSync(process.execPath, [__filename.replace(/\.ts$/, '.cjs'), dir], { encoding: 'utf8' })) as { ms: number; rss: number };
    const first = run();
    report('sample db: first open (generates ~61k rows)', first.ms, 'ms');
    report('sample db: RSS after first open', mib(first.rss), 'MiB');
    const again = [run(), run(), run()];
    report('sample db: reopen, median of 3', again.map((r) => r.ms).sort((a, b) => a - b)[1] ?? NaN, 'ms');
    report('sample db: RSS after reopen', mib(again[0]?.rss ?? NaN), 'MiB');
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}
