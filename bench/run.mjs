// `npm run bench`: bundles each bench/*.bench.ts (with node_modules left external, so packages load
// from the repository as usual) and runs it in its own Node process, which prints its numbers.
// Pass names to run a subset: `npm run bench -- classify impact`.
// Every bench runs: one that cannot start (a tool missing, a service down) is SKIPPED or FAILED with a loud
// line and the next one runs. At the end, a summary table: each bench's headline figure against its target.
import * as esbuild from 'esbuild';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const only = process.argv.slice(2);
// Inside this checkout (dist/ is ignored), so packages resolve from its node_modules and two checkouts that
// share one node_modules (git worktrees) never overwrite each other's bundles.
const outdir = join('dist', 'bench');
mkdirSync(outdir, { recursive: true });
const benches = readdirSync('bench')
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)));

const CHROMIUM = '/usr/bin/chromium';

/**
 * Per bench: the line of its output that is its headline (the first match; a `::headline figure | target` line
 * printed by the bench wins) and the target it is held to (SPEC §7, or the bench's own floor).
 */
const HEADLINES = {
  activation: [/^activation: p95/, '< 100 ms'],
  agent: [/overhead|per question/i, '< 50 ms per question'],
  cockpit: [/first paint|rendered|complete/i, 'first paint < 300 ms p95'],
  webview: [/first paint|rendered|complete/i, 'first paint < 300 ms'],
  context: [/^warm, all questions: p95/, 'bounded by the budget'],
  guard: [/guard cost per read at p50/, '< 0.2 ms over direct at p50'],
  introspection: [/^speed-up/, '< 1 s and ≥ 20× per-table queries; hit < 5 ms'],
  linking: [/^all needed tables in the top 15/, '≥ 85 %'],
  reach: [/^warm reachOf/, '< 5 ms added, once cached'],
  sql: [/^10M-row read: peak RSS growth/, 'reads bounded by the row cap'],
  mcp: [/^MCP layer per read/, 'small against the read'],
  scale: [/^fresh process reads one table, file/, '< 5 ms'],
};

/** What a bench needs before it can start, read from its source: missing → skipped with the reason. */
function missingTool(file) {
  const source = readFileSync(join('bench', file), 'utf8');
  if (/webviewPaint|launchBenchBrowser|chromium/.test(source) && !existsSync(CHROMIUM)) {
    return `needs Chromium at ${CHROMIUM} (install: sudo apt-get install chromium)`;
  }
  return undefined;
}

/** Runs one bundle, echoing its output as it comes and keeping it for the summary. */
function runBundle(out) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      text += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      text += chunk.toString('utf8');
    });
    child.once('error', (error) => resolve({ code: -1, text: `${text}\n${String(error)}` }));
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), text }));
  });
}

function headlineOf(name, text) {
  const explicit = text.split('\n').find((l) => l.startsWith('::headline '));
  if (explicit) {
    const [, figure = '', target = ''] = explicit.slice('::headline '.length).split(' | ');
    return { figure: figure.trim(), target: target.trim() };
  }
  const [pattern, target] = HEADLINES[name] ?? [undefined, '(no target)'];
  const lines = text.split('\n').filter((l) => /\d/.test(l) && !l.startsWith('==='));
  const line =
    (pattern ? lines.find((l) => pattern.test(l.trim())) : undefined) ?? lines.at(-1) ?? '(no figure printed)';
  return { figure: line.trim().replace(/\s{2,}/g, ': '), target };
}

const summary = [];
for (const file of benches) {
  const name = file.replace('.bench.ts', '');
  console.log(`\n=== ${name}`);
  const missing = missingTool(file);
  if (missing) {
    console.log(`!!! SKIPPED ${name}: ${missing}`);
    summary.push({ name, status: 'SKIPPED', figure: missing, target: '' });
    continue;
  }
  const out = join(outdir, file.replace(/\.ts$/, '.cjs'));
  try {
    await esbuild.build({
      entryPoints: [join('bench', file)],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    });
  } catch (error) {
    console.log(`!!! FAILED ${name}: it does not build (${error instanceof Error ? error.message : String(error)})`);
    summary.push({ name, status: 'FAILED', figure: 'does not build', target: '' });
    continue;
  }
  const started = Date.now();
  const { code, text } = await runBundle(out);
  const seconds = Math.round((Date.now() - started) / 1000);
  if (code !== 0) {
    const last = text.trim().split('\n').filter(Boolean).at(-1) ?? '';
    console.log(`!!! FAILED ${name}: exit ${code} after ${seconds} s (${last.slice(0, 160)})`);
    summary.push({ name, status: 'FAILED', figure: `exit ${code}: ${last.slice(0, 80)}`, target: '' });
    continue;
  }
  summary.push({ name, status: `ok ${seconds} s`, ...headlineOf(name, text) });
}

const width = (key) => Math.max(key.length, ...summary.map((r) => String(r[key]).length));
const cut = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
console.log('\n=== summary (headline figure against its target)');
const w = { name: width('name'), status: width('status') };
for (const r of summary) {
  console.log(
    `${r.name.padEnd(w.name)}  ${r.status.padEnd(w.status)}  ${cut(r.figure, 90)}${r.target ? `  [target ${r.target}]` : ''}`,
  );
}
const failed = summary.filter((r) => r.status === 'FAILED').length;
const skipped = summary.filter((r) => r.status === 'SKIPPED').length;
console.log(
  `\n${summary.length} benches: ${summary.length - failed - skipped} ran, ${skipped} skipped, ${failed} failed`,
);
process.exitCode = failed > 0 ? 1 : 0;
