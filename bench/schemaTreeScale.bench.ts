// Every surface at 50,000 tables (i34_scale50k, built by scale.bench.ts; used here if it exists, else built):
// the Schema tree read by schema against the whole-schema load it did before, and `health` bounded against the
// same checks listing every offender — paired, alternating in the same run, each run on a fresh SchemaCache (as a
// window opening on files other processes left). The machine is shared: medians, and the load average printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import type { Db } from '../src/core/db/db';
import { openPostgres } from '../src/core/db/postgresDb';
import { SchemaCache } from '../src/core/db/schemaCache';
import { schemaLevel, schemaTreeChildren, tablesLevel } from '../src/core/db/schemaTree';
import { runHealth } from '../src/core/dba/runHealth';
import { silentLogger } from '../src/core/platform/logger';
import { renderHealth } from '../src/core/present/renderHealth';
import { ensureScaleDatabase } from './scaleDatabase';
import { percentile, report } from './stats';

const KEY = 'tree50k-bench';
const SCHEMA = 'tenant_7';
const RUNS = 5;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

/** Before: the tree drew every level from the whole snapshot (all 50 schemas decoded, 50,000 tables filtered). */
async function wholeLoad(db: Db, dir: string): Promise<{ rootMs: number; expandMs: number; nodes: number }> {
  const cache = new SchemaCache({ dir, logger: silentLogger });
  try {
    const root = await timed(async () => schemaTreeChildren((await cache.get(db, KEY)).snapshot, undefined, ''));
    const schema = root.value.find((n) => n.kind === 'schema' && n.schema === SCHEMA);
    const expand = await timed(async () => schemaTreeChildren((await cache.get(db, KEY)).snapshot, schema, ''));
    return { rootMs: root.ms, expandMs: expand.ms, nodes: expand.value.length };
  } finally {
    cache.dispose();
  }
}

/** Now: the schemas from the index, then that schema alone, its first page. */
async function bySchema(db: Db, dir: string): Promise<{ rootMs: number; expandMs: number; nodes: number }> {
  const cache = new SchemaCache({ dir, logger: silentLogger });
  try {
    const root = await timed(async () => schemaLevel(await cache.schemas(db, KEY)));
    const expand = await timed(async () => tablesLevel(SCHEMA, await cache.tablesOf(db, KEY, SCHEMA), 1));
    return { rootMs: root.ms, expandMs: expand.ms, nodes: expand.value.length };
  } finally {
    cache.dispose();
  }
}

async function names(db: Db, dir: string): Promise<{ ms: number; count: number; bytes: number }> {
  const cache = new SchemaCache({ dir, logger: silentLogger });
  try {
    const { ms, value } = await timed(() => cache.tableNames(db, KEY));
    return { ms, count: value.reduce((n, s) => n + s.names.length, 0), bytes: cache.bytesRead(KEY) };
  } finally {
    cache.dispose();
  }
}

const med = (values: number[]) => percentile(values, 50);

async function main(): Promise<void> {
  console.log(`load average at start: ${load()} (2 cores, shared)`);
  const { url } = await ensureScaleDatabase((line) => console.log(line));
  const db = await openPostgres(parseConnectionUrl(url), { logger: silentLogger });
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-tree-bench-'));
  try {
    const fill = new SchemaCache({ dir, logger: silentLogger });
    const filled = await timed(() => fill.get(db, KEY));
    fill.dispose();
    report(
      'cache filled once (introspection)',
      `${filled.value.snapshot.tables.length} tables in ${filled.ms.toFixed(0)} ms`,
    );

    const before = { root: [] as number[], expand: [] as number[] };
    const after = { root: [] as number[], expand: [] as number[] };
    let shown = 0;
    for (let i = 0; i < RUNS; i++) {
      const a = await wholeLoad(db, dir);
      before.root.push(a.rootMs);
      before.expand.push(a.expandMs);
      const b = await bySchema(db, dir);
      after.root.push(b.rootMs);
      after.expand.push(b.expandMs);
      shown = b.nodes;
    }
    report(`tree: list the schemas, whole load (before), p50 of ${RUNS}`, med(before.root), 'ms');
    report(`tree: list the schemas, by schema (now), p50 of ${RUNS}`, med(after.root), 'ms');
    report(`tree: expand ${SCHEMA}, whole load (before), p50`, med(before.expand), 'ms');
    report(`tree: expand ${SCHEMA}, by schema (now), p50`, med(after.expand), 'ms');
    report('tree: nodes under the expanded schema (now)', `${shown} (a page and Load more…)`);
    const found = await names(db, dir);
    report(
      'Find Table: every name, fresh cache',
      `${found.count} names in ${found.ms.toFixed(0)} ms, ${(found.bytes / 1024).toFixed(0)} KiB read`,
    );
    console.log(
      `::headline tree open+expand ${(med(after.root) + med(after.expand)).toFixed(0)} ms vs ${(med(before.root) + med(before.expand)).toFixed(0)} ms whole load | by schema, never all decoded`,
    );

    const bounded: number[] = [];
    const unbounded: number[] = [];
    let sizes = { bounded: 0, unbounded: 0, more: 0, listed: 0 };
    const timedOut = { bounded: 0, unbounded: 0 };
    const skipped = (r: Awaited<ReturnType<typeof runHealth>>) => r.checks.filter((c) => c.status === 'skipped').length;
    for (let i = 0; i < 3; i++) {
      const all = await timed(() => runHealth(db, { maxFindings: 1_000_000 }));
      unbounded.push(all.ms);
      timedOut.unbounded += skipped(all.value);
      const some = await timed(() => runHealth(db));
      bounded.push(some.ms);
      timedOut.bounded += skipped(some.value);
      sizes = {
        bounded: JSON.stringify(some.value).length + renderHealth(some.value).length,
        unbounded: JSON.stringify(all.value).length + renderHealth(all.value).length,
        more: some.value.checks.reduce((n, c) => n + (c.more ?? 0), 0),
        listed: some.value.checks.reduce((n, c) => n + c.findings.length, 0),
      };
    }
    report('health, every offender listed, p50 of 3', med(unbounded), 'ms');
    report('health, at most 50 per check (now), p50 of 3', med(bounded), 'ms');
    report('health: findings listed / counted as more (now)', `${sizes.listed} / ${sizes.more}`);
    report(
      'health: checks that could not run (5 s timeout), 3 runs',
      `${timedOut.unbounded} all listed vs ${timedOut.bounded} now`,
    );
    report(
      'health: JSON + text size, last run, all listed vs bounded',
      `${(sizes.unbounded / 1e3).toFixed(0)} kB vs ${(sizes.bounded / 1e3).toFixed(0)} kB`,
    );
    console.log(`load average at end: ${load()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
