// DDL impact without hurting production (SPEC §5.4a): the statements of issue 10 on a 2M-row table while a
// reader and a writer probe the same table, printing each probe's worst latency during each impact analysis
// and the analysis (preview) time; then, for contrast, the naive preview (BEGIN; statement; ROLLBACK) of two.
import type { Client } from 'pg';
import pg from 'pg';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { classifySql } from '../src/core/sql/classify';
import { analyzeImpact } from '../src/core/sql/impact';
import { loadParser } from '../src/core/sql/parse';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { report } from './stats';

const ROWS = 2_000_000;
const PROBE_PAUSE_MS = 5;

const STATEMENTS = [
  'ALTER TABLE t ADD COLUMN x float DEFAULT random()',
  'CREATE INDEX ON t (a)',
  'ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)',
  'CREATE INDEX CONCURRENTLY ON t (b)',
  'INSERT INTO customers DEFAULT VALUES',
  'ALTER TABLE t ADD COLUMN y int DEFAULT 0',
  'ALTER TABLE t ALTER COLUMN b SET NOT NULL',
  'VACUUM FULL t',
];

/** A session that runs `query` in a loop and keeps the worst latency since the last reset. */
class Probe {
  worst = 0;
  count = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: Client,
    private readonly query: () => string,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        const started = performance.now();
        await this.client.query(this.query());
        this.worst = Math.max(this.worst, performance.now() - started);
        this.count++;
        await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS));
      }
    })();
  }

  reset(): void {
    this.worst = 0;
    this.count = 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

async function main(): Promise<void> {
  await loadParser();
  const scratch = await createScratchDatabase('pgagent_bench');
  const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  const clients: Client[] = [];
  const connect = async () => {
    const c = new pg.Client({ connectionString: scratch.url });
    await c.connect();
    clients.push(c);
    return c;
  };
  try {
    const setupStart = performance.now();
    await db.query('CREATE TABLE t (id int PRIMARY KEY, a int, b int)');
    await db.query(`INSERT INTO t SELECT g, g, g % 1000 FROM generate_series(1, ${ROWS}) g`);
    await db.query('CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL)');
    await db.query('ANALYZE t');
    report(`setup: ${ROWS.toLocaleString('en-US')}-row table t`, performance.now() - setupStart, 'ms');

    const random = () => 1 + Math.floor(Math.random() * ROWS);
    const reader = new Probe(await connect(), () => `SELECT a FROM t WHERE id = ${random()}`);
    const writer = new Probe(await connect(), () => `UPDATE t SET b = b WHERE id = ${random()}`);
    reader.start();
    writer.start();
    await new Promise((resolve) => setTimeout(resolve, 200));

    console.log('statement'.padEnd(48), 'previewed  risk      analysis  reader worst  writer worst');
    for (const sql of STATEMENTS) {
      reader.reset();
      writer.reset();
      const impact = await analyzeImpact(db, classifySql(sql), DEFAULT_SAFETY);
      console.log(
        sql.padEnd(48),
        String(impact.previewed).padEnd(10),
        impact.risk.padEnd(9),
        `${impact.previewMs} ms`.padStart(8),
        `${reader.worst.toFixed(1)} ms (${reader.count})`.padStart(13),
        `${writer.worst.toFixed(1)} ms (${writer.count})`.padStart(13),
      );
    }

    // The preview as it was before SPEC §5.4a: the statement itself in BEGIN … ROLLBACK.
    const naive = await connect();
    for (const sql of ['ALTER TABLE t ADD COLUMN x float DEFAULT random()', 'CREATE INDEX ON t (a)']) {
      reader.reset();
      writer.reset();
      const started = performance.now();
      await naive.query('BEGIN');
      await naive.query(sql);
      await naive.query('ROLLBACK');
      console.log(
        `naive: ${sql}`.padEnd(48),
        'true'.padEnd(10),
        '-'.padEnd(9),
        `${Math.round(performance.now() - started)} ms`.padStart(8),
        `${reader.worst.toFixed(1)} ms (${reader.count})`.padStart(13),
        `${writer.worst.toFixed(1)} ms (${writer.count})`.padStart(13),
      );
    }
    await reader.stop();
    await writer.stop();
  } finally {
    for (const c of clients) await c.end();
    await db.close();
    await scratch.drop();
  }
}

void main();
