// Schema linking without a model, before and after the enterprise-schema work, in one run on the same snapshots
// (the "before" is src/ at commit ee83537, taken from git and bundled when the bench starts):
// - BEAVER-nw: the five OpenStack databases (366 tables) rebuilt empty in ONE PostgreSQL database, each of the 88
//   questions asked against all of them; per database.
// - Spider 1.0: all 166 schemas (876 tables) in one database, the 1,034 dev questions asked against the whole.
// - the music store hidden among 2,000 look-alike tables (our own questions: a development set).
// - ranking alone on a generated 50,000-table snapshot (50 tenant schemas × 1,000 tables), index built and warm.
// Figures: every gold table in the top 15 entries, recall@5 / @15 (share of gold tables among the first 5/15
// entries), every gold table anywhere in the context, context tokens (median, max). A family or group entry
// counts for each of its members. Budget 6,000 tokens (the default).
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import pg from 'pg';
import { buildSchemaContext } from '../src/core/ask/schemaContext';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import type { SchemaSnapshot } from '../src/shared/schema';
import { MUSIC_STORE_QUESTIONS, musicStoreSql } from '../test/fixtures/musicStoreSchema';
import { tenantSnapshot } from '../test/fixtures/tenantSchema';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { beaverAvailable, loadBeaver, readBeaver } from './beaverData';
import { loadSpider, readSpider, spiderAvailable } from './spiderData';
import { percentile, report } from './stats';

const BUDGET = 6000;

interface Shown {
  tables: { schema: string; name: string; members?: string[]; schemas?: string[] }[];
  tokens: number;
}
type Linker = (snapshot: SchemaSnapshot, question: string) => Shown;
type ContextBuilder = (snapshot: SchemaSnapshot, question: string, options: { budgetTokens: number }) => Shown;

/** The linking before the enterprise-schema work: the commit's src/ from git, bundled beside the bench's own bundle. */
const BASELINE_COMMIT = 'ee83537';

function baselineContext(): ContextBuilder {
  const dir = join('dist', 'bench', 'linking-baseline');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execSync(`git archive ${BASELINE_COMMIT} src | tar -x -C ${dir}`);
  const outfile = resolve(dir, 'schemaContext.cjs');
  esbuild.buildSync({
    entryPoints: [join(dir, 'src', 'core', 'ask', 'schemaContext.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    packages: 'external',
    logLevel: 'error',
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle made at run time
  return (require(outfile) as { buildSchemaContext: ContextBuilder }).buildSchemaContext;
}

const before = baselineContext();
const LINKERS: [string, Linker][] = [
  ['before', (s, q) => before(s, q, { budgetTokens: BUDGET })],
  ['after', (s, q) => buildSchemaContext(s, q, { budgetTokens: BUDGET })],
];

interface Case {
  question: string;
  group: string;
  gold: string[];
}

interface Figures {
  n: number;
  all15: number;
  r5: number;
  r15: number;
  inContext: number;
  tokens: number[];
}

/** "schema.table" of every table an entry stands for (family members, and the same table in each schema of a group). */
function namesOf(t: Shown['tables'][number]): string[] {
  const names = [t.name, ...(t.members ?? [])];
  return [t.schema, ...(t.schemas ?? [])].flatMap((s) => names.map((n) => `${s}.${n}`.toLowerCase()));
}

function measure(
  snapshot: SchemaSnapshot,
  cases: readonly Case[],
  link: Linker,
  misses?: string[],
): Map<string, Figures> {
  const by = new Map<string, Figures>();
  for (const c of cases) {
    const shown = link(snapshot, c.question);
    const ranked = shown.tables.map(namesOf);
    const within = (k: number) => {
      const top = new Set(ranked.slice(0, k).flat());
      return c.gold.filter((g) => top.has(g)).length;
    };
    for (const key of [c.group, 'all']) {
      let f = by.get(key);
      if (!f) by.set(key, (f = { n: 0, all15: 0, r5: 0, r15: 0, inContext: 0, tokens: [] }));
      f.n++;
      f.r5 += within(5) / c.gold.length;
      f.r15 += within(15) / c.gold.length;
      if (within(15) === c.gold.length) f.all15++;
      if (within(Infinity) === c.gold.length) f.inContext++;
      f.tokens.push(shown.tokens);
    }
    if (misses && within(15) < c.gold.length) {
      const top = new Set(ranked.slice(0, 15).flat());
      misses.push(`  ${c.question.slice(0, 90)} -- missing ${c.gold.filter((g) => !top.has(g)).join(', ')}`);
    }
  }
  return by;
}

function line(f: Figures): string {
  const pct = (x: number) => (x / f.n).toFixed(3);
  return `all@15 ${pct(f.all15)} · r@5 ${pct(f.r5)} · r@15 ${pct(f.r15)} · all in context ${pct(f.inContext)} · tokens median ${percentile(f.tokens, 50)} max ${Math.max(...f.tokens)}`;
}

function compare(title: string, snapshot: SchemaSnapshot, cases: readonly Case[], headline?: string): void {
  const misses: string[] = [];
  const results = LINKERS.map(
    ([name, link]) => [name, measure(snapshot, cases, link, name === 'after' ? misses : undefined)] as const,
  );
  const groups = [...(results[0]?.[1].keys() ?? [])].sort((a, b) =>
    a === 'all' ? 1 : b === 'all' ? -1 : a < b ? -1 : 1,
  );
  console.log(`\n${title}`);
  for (const group of groups) {
    for (const [name, by] of results) {
      const f = by.get(group);
      if (f) report(`  ${group} (${f.n} questions) ${name}`, line(f));
    }
  }
  if (process.env.LINKING_MISSES) console.log(misses.join('\n'));
  // The summary's line (bench/run.mjs): every gold table in the top 15, after against before, in this run.
  const all = (name: string) => results.find(([n]) => n === name)?.[1].get('all');
  const [after, before] = [all('after'), all('before')];
  const share = (f: { all15: number; n: number }) => (f.all15 / f.n).toFixed(3);
  if (headline && after)
    console.log(
      `::headline ${headline} every gold table in the top 15 ${share(after)}${before ? ` (before ${share(before)})` : ''} | ≥ 0.85`,
    );
}

/** LINKING_SNAPSHOTS=dir keeps each introspected snapshot there (for quick reruns while tuning; off by default). */
async function introspected(prefix: string, load: (client: pg.Client) => Promise<string>): Promise<SchemaSnapshot> {
  const kept = process.env.LINKING_SNAPSHOTS ? join(process.env.LINKING_SNAPSHOTS, `${prefix}.json`) : undefined;
  if (kept && existsSync(kept)) return JSON.parse(readFileSync(kept, 'utf8')) as SchemaSnapshot;
  const scratch = await createScratchDatabase(prefix);
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  try {
    const note = await load(setup);
    await setup.query('ANALYZE');
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    const snapshot = await db.withSession((s) => introspectSchema(s));
    await db.close();
    console.log(`${prefix}: ${snapshot.tables.length} tables; ${note}`);
    if (kept) writeFileSync(kept, JSON.stringify(snapshot));
    return snapshot;
  } finally {
    await setup.end();
    await scratch.drop();
  }
}

async function beaver(): Promise<void> {
  if (!beaverAvailable()) return void console.log('BEAVER-nw data not found beside the repository: skipped');
  const data = readBeaver();
  const snapshot = await introspected('pgagent_linking_beaver', async (c) => {
    const { fks, fksDeclared } = await loadBeaver(c, data);
    return `${fks} of ${fksDeclared} declared FKs`;
  });
  const cases = data.cases.map((c) => ({ question: c.question, group: c.db, gold: c.gold }));
  compare(
    `BEAVER-nw: ${cases.length} questions against all ${snapshot.tables.length} tables`,
    snapshot,
    cases,
    'BEAVER-nw',
  );
}

async function spider(): Promise<void> {
  if (!spiderAvailable()) return void console.log('Spider data not found beside the repository: skipped');
  const data = readSpider();
  const snapshot = await introspected('pgagent_linking_spider', async (c) => {
    const { fks, fksDeclared } = await loadSpider(c, data.schemas);
    return `${fks} of ${fksDeclared} declared FKs`;
  });
  const cases = data.cases.map((c) => ({
    question: c.question,
    group: 'spider',
    gold: c.gold.map((g) => g.toLowerCase()),
  }));
  compare(`Spider 1.0 dev: ${cases.length} questions against all ${snapshot.tables.length} tables`, snapshot, cases);
}

async function musicStore(): Promise<void> {
  const snapshot = await introspected('pgagent_linking_music', async (c) => {
    await c.query(musicStoreSql(1950));
    return 'the music store among look-alikes';
  });
  const cases = MUSIC_STORE_QUESTIONS.map((m) => ({
    question: m.question,
    group: 'music',
    gold: m.needs.map((n) => `public.${n}`.toLowerCase()),
  }));
  compare(`Music store among look-alikes: ${cases.length} questions`, snapshot, cases);
}

/** Ranking alone (no database) on 50 tenant schemas × 1,000 tables: the index of a new snapshot, then a question. */
function scale(): void {
  console.log('\n50,000 tables (tenant_1…tenant_50 × t_1…t_1000, 8 columns, FK chains), in memory');
  const question = 'total amount per status for tenant 7 in table t_12';
  for (const [name, link] of LINKERS) {
    const cold: number[] = [];
    const warm: number[] = [];
    let top = '';
    for (let run = 0; run < 3; run++) {
      const snapshot = tenantSnapshot(50, 1000);
      let start = performance.now();
      const shown = link(snapshot, question);
      cold.push(performance.now() - start);
      start = performance.now();
      link(snapshot, 'amount per status in table t_900 for tenant 42');
      warm.push(performance.now() - start);
      top = shown.tables
        .slice(0, 3)
        .map((t) => `${t.schema}.${t.name}`)
        .join(', ');
    }
    report(`  ${name}: new snapshot (index + rank), median of 3`, percentile(cold, 50), 'ms');
    report(`  ${name}: next question on it, median of 3`, percentile(warm, 50), 'ms');
    report(`  ${name}: top 3 for "${question}"`, top);
  }
}

async function main(): Promise<void> {
  // LINKING_ONLY=beaver,spider,music,scale runs a part (all by default).
  const only = process.env.LINKING_ONLY?.split(',');
  const part = (name: string) => !only || only.includes(name);
  if (part('beaver')) await beaver();
  if (part('spider')) await spider();
  if (part('music')) await musicStore();
  if (part('scale')) scale();
}

void main();
