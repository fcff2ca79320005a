// The whole product at 50,000 tables (50 schemas × 1,000 tables, 8 columns, FK chains; built once as
// i34_scale50k and kept). Each figure is a whole fresh Node process (the bench runs itself with --child),
// median of a few runs, against the SPEC §7 targets and the floor in the same run: psql fetching the same
// catalog rows. The machine is shared: medians, and the load average is printed.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { cachedSchemaContext } from '../src/core/ask/cachedContext';
import { buildSchemaContext } from '../src/core/ask/schemaContext';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import {
  COLUMN_COMMENTS_SQL,
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  DEFAULTS_SQL,
  indexesSql,
  PRIMARY_KEYS_SQL,
  RELATIONS_SQL,
  TRIGGERS_SQL,
} from '../src/core/db/introspectQueries';
import { openPostgres } from '../src/core/db/postgresDb';
import { SchemaCache, TRUST_FOR_MS } from '../src/core/db/schemaCache';
import { catalogActivity } from '../src/core/db/schemaVersion';
import { schemaTreeChildren } from '../src/core/db/schemaTree';
import { runHealth } from '../src/core/dba/runHealth';
import { silentLogger } from '../src/core/platform/logger';
import { loadCodeCatalog } from '../src/core/sql/reach/codeCatalog';
import { ensureScaleDatabase, scaleDatabaseUrl } from './scaleDatabase';
import { percentile, report } from './stats';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUESTION = 'total amount of orders_0512 per status for tenant 7';
const KEY = 'scale-bench';

interface Figure {
  ms: number;
  rssMb: number;
  [k: string]: number;
}

/** One measurement in this (fresh) process; prints its JSON. */
async function child(task: string, dir: string, prefix: string): Promise<void> {
  const db = await openPostgres(parseConnectionUrl(scaleDatabaseUrl()), { logger: silentLogger });
  const redis = task.endsWith('Redis') ? new Redis(REDIS_URL) : undefined;
  // As the CLI and MCP open it (openSchemaCache): a one-table read trusts a confirmation of the last 2 s.
  // `tableChecked`: the same read with no trust, so it asks the server (the freshness query) first.
  const trustForMs = task === 'tableChecked' ? 0 : TRUST_FOR_MS;
  const cache = new SchemaCache({ ...(redis ? { redis, prefix } : { dir }), trustForMs, logger: silentLogger });
  // The connections are not what is measured: PostgreSQL's, and Redis' (its first command waits until it is ready).
  await db.query('SELECT 1');
  await redis?.ping();
  const start = performance.now();
  const extra: Record<string, number> = {};
  if (task === 'cold') {
    const cpu = process.cpuUsage();
    extra.tables = await db.withSession(async (s) => {
      // The server's CPU for it: its backend's, when the server runs on this machine (/proc readable), else NaN.
      const pid = Number((await s.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
      const before = backendCpuMs(pid);
      const tables = (await introspectSchema(s)).tables.length;
      extra.serverCpuMs = backendCpuMs(pid) - before;
      return tables;
    });
    const used = process.cpuUsage(cpu);
    extra.clientCpuMs = (used.user + used.system) / 1000;
  } else if (task === 'cached' || task === 'cachedRedis') {
    const { snapshot, source } = await cache.get(db, KEY);
    extra.tables = snapshot.tables.length;
    extra.hit = source === 'introspected' ? 0 : 1;
  } else if (task === 'table' || task === 'tableRedis' || task === 'tableChecked') {
    const table = await cache.table(db, KEY, 'tenant_7', 'orders_0512');
    extra.columns = table?.columns.length ?? -1;
    extra.bytesRead = cache.bytesRead(KEY);
    extra.endMs = performance.now();
    const query = performance.now();
    await db.withSession((s) => catalogActivity(s));
    extra.freshnessMs = performance.now() - query;
  } else if (task === 'context') {
    // As `pg-agent context` does: the linking index stored with the cache, only the schemas it needs decoded.
    const built = await cachedSchemaContext(cache, db, KEY, QUESTION, { budgetTokens: 6000 });
    extra.endMs = performance.now();
    extra.tables = built.tables.length;
    extra.topTenant = built.tables[0]?.schema === 'tenant_7' ? 1 : 0;
    const { snapshot } = await cache.get(db, KEY);
    const linking = performance.now();
    buildSchemaContext(snapshot, QUESTION, { budgetTokens: 6000 });
    extra.linkingMs = performance.now() - linking;
    // The Schema tree as it is drawn today: from the whole snapshot, its root, then one schema opened, then a search.
    const tree = performance.now();
    const roots = schemaTreeChildren(snapshot, undefined, '');
    schemaTreeChildren(
      snapshot,
      roots.find((n) => n.kind === 'schema' && n.schema === 'tenant_7'),
      '',
    );
    extra.treeMs = performance.now() - tree;
    const search = performance.now();
    extra.searchHits = schemaTreeChildren(snapshot, undefined, 'orders_0512').reduce(
      (n, node) => n + (node.kind === 'schema' ? node.tables : 0),
      0,
    );
    extra.searchMs = performance.now() - search;
  } else if (task === 'tree') {
    const schemas = await cache.schemas(db, KEY);
    extra.schemas = schemas.length;
    extra.schemasMs = performance.now() - start;
    extra.tables = (await cache.tablesOf(db, KEY, 'tenant_7')).length;
  } else if (task === 'reach') {
    extra.relations = (await db.withSession((s) => loadCodeCatalog(s))).relations.size;
  } else if (task === 'health') {
    extra.findings = (await runHealth(db)).summary.findings;
  }
  const ms = (extra.endMs ?? performance.now()) - start;
  delete extra.endMs;
  const figure: Figure = { ms, rssMb: process.resourceUsage().maxRSS / 1024, ...extra };
  console.log(JSON.stringify(figure));
  cache.dispose();
  redis?.disconnect();
  await db.close();
}

/** CPU time of a local PostgreSQL backend (user + system, ms), or NaN when its /proc entry cannot be read. */
function backendCpuMs(pid: number): number {
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    // utime and stime, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** The bundle copied aside, so a build that empties dist/ meanwhile does not take the children's code away. */
let childBundle: string | undefined;

function keepBundle(): string {
  if (!childBundle) {
    childBundle = join(mkdtempSync(join(tmpdir(), 'pgagent-scale-bundle-')), 'scale.cjs');
    copyFileSync(__filename, childBundle);
  }
  return childBundle;
}

function runChild(task: string, dir: string, prefix: string): Figure {
  const bundle = keepBundle();
  const out = execFileSync(process.execPath, [bundle, '--child', task, dir, prefix], {
    encoding: 'utf8',
    env: { ...process.env, NODE_PATH: join(process.cwd(), 'node_modules') },
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Figure;
}

function median(task: string, runs: number, dir: string, prefix: string): Figure {
  const figures = Array.from({ length: runs }, () => runChild(task, dir, prefix));
  const ms = percentile(
    figures.map((f) => f.ms),
    50,
  );
  const at = figures.find((f) => f.ms === ms) ?? figures[0];
  return { ...(at as Figure), rssMb: Math.max(...figures.map((f) => f.rssMb)) };
}

/** median() with `before` awaited before each run (a confirmation by another process, just before this one). */
async function medianAfter(
  task: string,
  runs: number,
  dir: string,
  prefix: string,
  before: () => Promise<void>,
): Promise<Figure> {
  const figures: Figure[] = [];
  for (let i = 0; i < runs; i++) {
    await before();
    figures.push(runChild(task, dir, prefix));
  }
  const ms = percentile(
    figures.map((f) => f.ms),
    50,
  );
  return {
    ...(figures.find((f) => f.ms === ms) ?? figures[0]),
    rssMb: Math.max(...figures.map((f) => f.rssMb)),
  } as Figure;
}

/** psql running the same catalog queries (the whole catalog at once, output discarded): the floor. */
function psqlFloor(url: string): number {
  const oids = `(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r','p','v','m','f') AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg\\_%')`;
  const sql = [RELATIONS_SQL.replaceAll('$1::text[]', 'NULL::text[]')]
    .concat(
      [
        COLUMNS_SQL,
        COLUMN_COMMENTS_SQL,
        DEFAULTS_SQL,
        PRIMARY_KEYS_SQL,
        CONSTRAINTS_SQL,
        indexesSql(true),
        TRIGGERS_SQL,
      ].map((q) =>
        q
          .replace('::int8 = ANY($1::int8[])', ` IN ${oids}`)
          .replace('BETWEEN $2 AND $3', 'BETWEEN 0 AND 4294967295')
          .replace('BETWEEN $1 AND $2', 'BETWEEN 0 AND 4294967295'),
      ),
    )
    .map((q) => `${q};`)
    .join('\n');
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    const r = spawnSync('psql', [url, '-X', '-q', '-o', '/dev/null', '-c', sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    times.push(performance.now() - start);
  }
  return percentile(times, 50);
}

function verdict(value: number, limit: number): string {
  return value <= limit ? 'within' : 'OVER';
}

async function main(): Promise<void> {
  keepBundle(); // now: building the database takes minutes, during which a build may empty dist/
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (2 cores, shared)`,
  );
  const built = await ensureScaleDatabase((line) => console.log(line));
  report(
    'database',
    `${built.url.replace(/^.*\//, '')} (${built.builtNow ? 'built now' : 'kept from an earlier run'})`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-scale-'));
  const prefix = `pgagent-scale-${randomBytes(3).toString('hex')}:`;
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  let redisUp = true;
  await redis.connect().catch(() => (redisUp = false));
  try {
    const floor = psqlFloor(built.url);
    report('floor: psql fetching the same catalog rows, p50 of 3', floor, 'ms');
    const cold = median('cold', 3, dir, prefix);
    report(`cold introspection (${cold.tables} tables), p50 of 3`, cold.ms, 'ms');
    report('  against 3× psql', `${(cold.ms / floor).toFixed(2)}× psql: ${verdict(cold.ms, 3 * floor)}`);
    report('  RSS (max of 3, target < 500 MB)', `${cold.rssMb.toFixed(0)} MB: ${verdict(cold.rssMb, 500)}`);
    report(
      '  CPU of that run: client (this Node process) / server (its backend, when local)',
      `${(cold.clientCpuMs ?? NaN).toFixed(0)} ms / ${(cold.serverCpuMs ?? NaN).toFixed(0)} ms`,
    );

    // The cache is filled once (introspection + encoding + writing), then read by fresh processes.
    runChild('cached', dir, prefix);
    const cached = median('cached', 5, dir, prefix);
    report('cached load, whole schema, fresh process, file, p50 of 5', cached.ms, 'ms');
    report('  against 1× psql (and < 300 ms)', `${(cached.ms / floor).toFixed(2)}× psql: ${verdict(cached.ms, floor)}`);
    report('  RSS', cached.rssMb, 'MB');
    // Another process (an agent's earlier call, the window) confirmed the cache just before: within the window.
    const confirmer = await openPostgres(parseConnectionUrl(built.url), { logger: silentLogger });
    const confirm = (options: { dir: string } | { redis: Redis; prefix: string }) => async () => {
      const other = new SchemaCache({ ...options, trustForMs: TRUST_FOR_MS, logger: silentLogger });
      await other.schemas(confirmer, KEY);
      other.dispose();
    };
    const table = await medianAfter('table', 9, dir, prefix, confirm({ dir }));
    report(
      'fresh process reads one table, file, within 2 s of a confirmation, p50 of 9 (target < 5 ms)',
      table.ms,
      'ms',
    );
    report('  bytes read (index + directory + the table)', `${table.bytesRead} bytes`);
    report('  of which about its freshness query (one round trip, timed after)', table.freshnessMs ?? NaN, 'ms');
    const checked = median('tableChecked', 9, dir, prefix);
    report('  the same read asking the server first (no trust window), p50 of 9', checked.ms, 'ms');
    if (redisUp) {
      runChild('cachedRedis', dir, prefix);
      const cachedRedis = median('cachedRedis', 5, dir, prefix);
      report('cached load, whole schema, fresh process, Redis, p50 of 5', cachedRedis.ms, 'ms');
      const tableRedis = await medianAfter('tableRedis', 9, dir, prefix, confirm({ redis, prefix }));
      report('fresh process reads one table, Redis, within 2 s of a confirmation, p50 of 9', tableRedis.ms, 'ms');
      report('  of which about its freshness query', tableRedis.freshnessMs ?? NaN, 'ms');
      report('  bytes read (index + directory + the table)', `${tableRedis.bytesRead} bytes`);
    } else console.log('!!! Redis not reachable: the Redis figures are SKIPPED');

    const contextFirst = runChild('context', dir, prefix);
    report('context, first process after a schema change (builds + stores the linking index)', contextFirst.ms, 'ms');
    const context = median('context', 3, dir, prefix);
    report(
      'context: stored linking index + the schemas it needs, fresh process, p50 of 3 (target < 300 ms)',
      context.ms,
      'ms',
    );
    report('  top table in tenant_7 (the tenant the question names)', context.topTenant === 1 ? 'yes' : 'NO');
    report(
      '  the same over the whole snapshot, index built in-process (the way before)',
      context.linkingMs ?? NaN,
      'ms',
    );
    report('Schema tree from the snapshot: root + one schema opened', context.treeMs ?? NaN, 'ms');
    report(`  search "orders_0512" (${context.searchHits} tables found)`, context.searchMs ?? NaN, 'ms');
    report('  against 0.5× psql', `${(context.ms / floor).toFixed(2)}× psql: ${verdict(context.ms, 0.5 * floor)}`);
    const cli = join('dist', 'cli.js');
    if (existsSync(cli)) {
      const ws = mkdtempSync(join(tmpdir(), 'pgagent-scale-ws-'));
      const args = [cli, 'context', '--json', '--db', built.url, '--workspace', ws, '--', QUESTION];
      execFileSync(process.execPath, args, { stdio: 'ignore' });
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        execFileSync(process.execPath, args, { stdio: 'ignore' });
        times.push(performance.now() - start);
      }
      report('pg-agent context (whole CLI process, warm cache), p50 of 3', percentile(times, 50), 'ms');
      rmSync(ws, { recursive: true, force: true });
    } else console.log('!!! dist/cli.js missing (npm run build): the whole-process `pg-agent context` is SKIPPED');

    const tree = median('tree', 5, dir, prefix);
    report(
      'cache by schema (schemas(), then tablesOf one): list, fresh process, p50 of 5',
      tree.schemasMs ?? NaN,
      'ms',
    );
    report('  + one schema decoded alone (1,000 tables)', tree.ms, 'ms');

    // Per-schema invalidation: a change in one schema re-reads that schema only.
    const db = await openPostgres(parseConnectionUrl(built.url), { logger: silentLogger });
    const cache = new SchemaCache({ dir, logger: silentLogger });
    await cache.get(db, KEY);
    await db.query(`COMMENT ON TABLE tenant_50.orders_0000 IS 'scale bench ${Date.now()}'`);
    await cache.invalidate(KEY, { schemas: [] }); // as the DDL's announcement does
    const start = performance.now();
    const after = await cache.get(db, KEY);
    report('after a DDL in one schema: version check + that schema re-read', performance.now() - start, 'ms');
    report('  source', after.source);
    cache.dispose();

    const reach = median('reach', 3, dir, prefix);
    report("guard's reach: code catalog load, fresh process, p50 of 3", reach.ms, 'ms');
    report('  relations in it / RSS', `${reach.relations} / ${reach.rssMb.toFixed(0)} MB`);
    const health = median('health', 1, dir, prefix);
    report('health (every check, catalog reads bounded), 1 run', health.ms, 'ms');
    await db.close();
    await confirmer.close();
    console.log(
      `::headline scale | one table in a fresh process ${table.ms.toFixed(2)} ms; cold ${(cold.ms / 1000).toFixed(2)} s ` +
        `(${(cold.ms / floor).toFixed(1)}× psql), ${cold.rssMb.toFixed(0)} MB; cached ${cached.ms.toFixed(0)} ms; ` +
        `context ${context.ms.toFixed(0)} ms | < 5 ms; cold ≤ 3× psql and < 500 MB; cached ≤ 1× psql; context < 300 ms`,
    );
  } finally {
    if (redisUp) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  void child(process.argv[3] ?? '', process.argv[4] ?? '', process.argv[5] ?? '');
} else void main();
