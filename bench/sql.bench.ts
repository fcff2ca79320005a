// The SQL safety path's costs: classification throughput over the adversarial corpus, the impact
// preview of writes on a 1M-row table (bounded by its timeout), and the memory a 10M-row read holds
// with the row cap (the cursor fetches only cap + 1 rows).
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { classifySql } from '../src/core/sql/classify';
import { analyzeImpact } from '../src/core/sql/impact';
import { loadParser } from '../src/core/sql/parse';
import { runRead } from '../src/core/sql/runRead';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { sqlCorpus } from '../test/fixtures/sqlCorpus';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { mib, percentile, report, timeRuns } from './stats';

async function main(): Promise<void> {
  await loadParser();
  const statements = sqlCorpus.map((c) => c.sql);
  for (let i = 0; i < 200; i++) for (const s of statements) classifySql(s);
  const rounds = 50;
  const start = performance.now();
  for (let i = 0; i < rounds; i++) for (const s of statements) classifySql(s);
  const seconds = (performance.now() - start) / 1000;
  report(
    `classification: ${statements.length} corpus inputs × ${rounds}`,
    (statements.length * rounds) / seconds,
    'inputs/s',
  );

  const scratch = await createScratchDatabase('pgagent_bench');
  const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  try {
    await db.query('CREATE TABLE big (id int PRIMARY KEY, v int NOT NULL, note text)');
    await db.query(`INSERT INTO big SELECT g, g % 1000, md5(g::text) FROM generate_series(1, 1000000) g`);
    await db.query('ANALYZE big');
    const settings = { ...DEFAULT_SAFETY };
    const tenth = await timeRuns(3, () =>
      analyzeImpact(db, classifySql('UPDATE big SET v = v + 1 WHERE id % 10 = 0'), settings),
    );
    report('impact preview, UPDATE of 100k of 1M rows, p50 of 3', percentile(tenth, 50), 'ms');
    const bounded = await analyzeImpact(db, classifySql('DELETE FROM big'), { ...settings, previewTimeoutMs: 500 });
    report(
      'impact preview, DELETE of 1M rows with a 500 ms limit',
      `${bounded.previewMs} ms, would fail: ${bounded.wouldFail?.code ?? 'no'}`,
    );
    const full = await analyzeImpact(db, classifySql('DELETE FROM big'), settings);
    report(
      'impact preview, DELETE of 1M rows, default 10 s limit',
      `${full.previewMs} ms, exact ${full.exactRows ?? 'n/a'}, ${full.risk}`,
    );

    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const heapBefore = process.memoryUsage().heapUsed;
    let peak = rssBefore;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const read = await runRead(db, 'SELECT g AS id, md5(g::text) AS h FROM generate_series(1, 10000000) g', true, {
      ...settings,
      maxRows: 1000,
    });
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    report('10M-row read with a 1,000-row cap: rows returned / truncated', `${read.rowCount} / ${read.truncated}`);
    report('10M-row read: time', read.elapsedMs, 'ms');
    report('10M-row read: peak RSS growth', mib(peak - rssBefore), 'MiB');
    report('10M-row read: heap growth after', mib(process.memoryUsage().heapUsed - heapBefore), 'MiB');
  } finally {
    await db.close();
    await scratch.drop();
  }
}

void main();
