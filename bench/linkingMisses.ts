// Analysis (not a bench): for each question whose gold tables are not all in the top 15, the gold tables' ranks
// and scores and what outranks them. Reads the snapshots kept by `LINKING_SNAPSHOTS=dir npm run bench -- linking`.
// Run: npx esbuild bench/linkingMisses.ts --bundle --platform=node --packages=external --outfile=dist/misses.cjs
//      && node dist/misses.cjs /tmp/linking-snap [beaver|spider] [filter]   (TIES=1 lists the passes on a tie)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchemaContext } from '../src/core/ask/schemaContext';
import { rank } from '../src/core/ask/linking/ranking';
import { indexOf } from '../src/core/ask/linking/schemaIndex';
import type { SchemaSnapshot } from '../src/shared/schema';
import { readBeaver } from './beaverData';
import { readSpider } from './spiderData';

const [dir = '/tmp/linking-snap', which = 'beaver', filter = ''] = process.argv.slice(2);
const snapshot = JSON.parse(readFileSync(join(dir, `pgagent_linking_${which}.json`), 'utf8')) as SchemaSnapshot;
const cases =
  which === 'beaver'
    ? readBeaver().cases.map((c) => ({ question: c.question, group: c.db, gold: c.gold }))
    : readSpider().cases.map((c) => ({
        question: c.question,
        group: 'spider',
        gold: c.gold.map((g) => g.toLowerCase()),
      }));
const groups = new Map<string, [number, number]>();
const tokens: number[] = [];
const index = indexOf(snapshot);
let all15 = 0;
let ties = 0;
for (const c of cases) {
  const shown = buildSchemaContext(snapshot, c.question, { budgetTokens: 6000 });
  const names = shown.tables.map((t) =>
    [t.schema, ...(t.schemas ?? [])].flatMap((s) =>
      [t.name, ...(t.members ?? [])].map((n) => `${s}.${n}`.toLowerCase()),
    ),
  );
  const top = new Set(names.slice(0, 15).flat());
  const ok = c.gold.every((g) => top.has(g));
  if (ok) all15++;
  tokens.push(shown.tokens);
  const g = groups.get(c.group) ?? [0, 0];
  groups.set(c.group, [g[0] + (ok ? 1 : 0), g[1] + 1]);
  // A pass that rides on a tie: a gold table in the top 15 scores the same as the 16th shown.
  const next = shown.tables[15];
  if (
    ok &&
    next &&
    shown.tables.slice(0, 15).some((t, i) => t.score === next.score && c.gold.includes(names[i]?.[0] ?? ''))
  ) {
    ties++;
    if (process.env.TIES) console.log(`TIE ${c.question.slice(0, 100)}`);
  }
  if (ok && !filter) continue;
  if (filter && !c.question.includes(filter)) continue;
  const ranked = rank(index, c.question, {}, true);
  const pos = (g: string) =>
    ranked.findIndex(
      (r) =>
        `${r.entry.table.schema}.${r.entry.table.name}`.toLowerCase() === g ||
        (r.entry.members ?? []).some((m) => `${r.entry.table.schema}.${m}`.toLowerCase() === g),
    );
  console.log(`\n${ok ? 'OK  ' : 'MISS'} ${c.question}  [${shown.tokens} tokens, ${shown.tables.length} tables]`);
  const worst = Math.max(...c.gold.map(pos));
  ranked.slice(0, Math.max(16, worst + 1)).forEach((r, i) => {
    const key = `${r.entry.table.schema}.${r.entry.table.name}`.toLowerCase();
    const mark = c.gold.includes(key) ? '*' : ' ';
    console.log(`  ${mark}${String(i + 1).padStart(3)} ${r.score.toFixed(2).padStart(7)} ${r.entry.table.name}`);
  });
}
tokens.sort((a, b) => a - b);
console.log(
  `\n${[...groups].map(([k, [a, n]]) => `${k} ${a}/${n}`).join(' · ')} · tokens median ${tokens[Math.floor(tokens.length / 2)]} max ${tokens.at(-1)}`,
);
console.log(`\nall gold in top 15: ${all15}/${cases.length} (${ties} of them on a tie at rank 15/16)`);
