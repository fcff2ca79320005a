// `npm run bench`: bundles each bench/*.bench.ts (with node_modules left external, so packages load
// from the repository as usual) and runs it in its own Node process, which prints its numbers.
// Pass names to run a subset: `npm run bench -- classify impact`.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const only = process.argv.slice(2);
// Inside this checkout (dist/ is ignored), so packages resolve from its node_modules and two checkouts that
// share one node_modules (git worktrees) never overwrite each other's bundles.
const outdir = join('dist', 'bench');
mkdirSync(outdir, { recursive: true });
const benches = readdirSync('bench')
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)));

for (const file of benches) {
  const out = join(outdir, file.replace(/\.ts$/, '.cjs'));
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
  console.log(`\n=== ${file.replace('.bench.ts', '')}`);
  execFileSync(process.execPath, ['--expose-gc', out], { stdio: 'inherit' });
}
