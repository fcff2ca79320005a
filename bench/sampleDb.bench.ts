// The embedded sample database: first open and reopen time, and process memory after, each in a fresh
// process: first open restoring the image the build ships (dist/sample-db.tar.gz, `npm run build`), and
// first open generating it (no image: running from source, or the image of another version).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { silentLogger } from '../src/core/logger';
import { openSampleDb } from '../src/core/db/sample/openSampleDb';
import { mib, report } from './stats';

const IMAGE = resolve('dist', 'sample-db.tar.gz');

async function once(dir: string, imageFile: string): Promise<void> {
  const start = performance.now();
  const db = await openSampleDb({ dataDir: dir, logger: silentLogger, imageFile });
  const ms = performance.now() - start;
  await db.query('SELECT count(*) FROM orders');
  process.stdout.write(JSON.stringify({ ms, rss: process.memoryUsage().rss }));
  await db.close();
}

function measure(label: string, imageFile: string): void {
  const dir = join(mkdtempSync(join(tmpdir(), 'pgagent-sample-bench-')), 'sample-db');
  try {
    const run = () => JSON.parse(execFileSync(process.execPath, [__filename.replace(/\.ts$/, '.cjs'), dir, imageFile], { encoding: 'utf8' })) as { ms: number; rss: number };
    const first = run();
    report(`sample db: first open, ${label}`, first.ms, 'ms');
    report('  RSS after first open', mib(first.rss), 'MiB');
    const again = [run(), run(), run()];
    report('  reopen, median of 3', again.map((r) => r.ms).sort((a, b) => a - b)[1] ?? NaN, 'ms');
    report('  RSS after reopen', mib(again[0]?.rss ?? NaN), 'MiB');
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}

if (process.argv[2] && process.argv[3]) {
  void once(process.argv[2], process.argv[3]);
} else {
  if (existsSync(IMAGE)) measure('restoring the shipped image', IMAGE);
  else report('sample db: no shipped image', 'run npm run build first', '');
  measure('generating it (no image)', join(tmpdir(), 'no-such-sample-image.tar.gz'));
}
