// Builds the bundles of the product and copies the WASM assets they load beside them.
//   dist/extension.js  VS Code entry (CJS, small: no database or parser code)
//   dist/services.js   the core, required lazily by the extension on first use
//   dist/cli.js        `pg-agent` (CJS, executable)
//   dist/sampleDbWorker.js  the worker thread that owns the sample database in the extension host
//   dist/diagramLayoutWorker.js  the schema diagram's layout thread in the extension host (elkjs)
//   dist/webview.js    the panel UI (browser IIFE); dist/collab.js the planning session view; dist/cockpit.js a job's cockpit;
//                      dist/diagram.js the schema diagram (no elkjs: the host lays it out)
//                      (and dist/cockpitMarkdown.js, the markdown renderer it loads after its first paint)
// Flags: --watch (rebuild on change), --production (minify, no source maps).
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const require = createRequire(import.meta.url);
const outdir = 'dist';

// Bundled ESM dependencies (PGlite) locate their assets with import.meta.url; in a CJS bundle that is
// the bundle's own file, so the assets are copied next to it.
const importMetaUrlBanner = "const __importMetaUrl = require('url').pathToFileURL(__filename).href;";

const NATIVE_OPTIONAL = ['pg-native', 'cpu-features', '*.node'];

/** @type {esbuild.BuildOptions} */
const nodeCommon = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
  define: { 'import.meta.url': '__importMetaUrl' },
  banner: { js: importMetaUrlBanner },
  // Optional native accelerators of `pg` and `ssh2` (cpu-features, and ssh2's own sshcrypto.node that `npm ci`
  // builds when a compiler is there: both required in a try by ssh2); left out of the bundles, so the pure-JS
  // path is used (no native addons in the host).
  external: NATIVE_OPTIONAL,
};

const builds = [
  { ...nodeCommon, entryPoints: { extension: 'src/extension.ts' }, outdir, external: ['vscode', ...NATIVE_OPTIONAL] },
  {
    ...nodeCommon,
    entryPoints: { services: 'src/host/services.ts' },
    outdir,
    external: ['vscode', ...NATIVE_OPTIONAL],
  },
  // The sample database's worker thread (the extension host opens PGlite there, off the thread that draws the editor).
  { ...nodeCommon, entryPoints: { sampleDbWorker: 'src/core/db/sample/sampleDbWorker.ts' }, outdir },
  { ...nodeCommon, entryPoints: { diagramLayoutWorker: 'src/core/diagram/diagramLayoutWorker.ts' }, outdir },
  {
    ...nodeCommon,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir,
    banner: { js: `#!/usr/bin/env node\n${importMetaUrlBanner}` },
  },
  {
    // The review panel, and the collaborative planning session view (an editor panel with its own protocol).
    entryPoints: {
      webview: 'webview/panel/main.ts',
      collab: 'webview/collab/main.ts',
      results: 'webview/results/main.ts',
      diagram: 'webview/diagram/main.ts',
      cockpit: 'webview/cockpit/main.ts',
      cockpitMarkdown: 'webview/cockpit/markdownChunk.ts',
    },
    outdir,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: !production,
    minify: production,
    logLevel: 'info',
  },
];

function copyAssets() {
  mkdirSync(outdir, { recursive: true });
  const pgliteDir = dirname(require.resolve('@electric-sql/pglite'));
  for (const file of ['pglite.wasm', 'pglite.data', 'initdb.wasm']) {
    copyFileSync(join(pgliteDir, file), join(outdir, file));
  }
  const pgQueryDir = dirname(require.resolve('libpg-query'));
  copyFileSync(join(pgQueryDir, 'libpg-query.wasm'), join(outdir, 'libpg-query.wasm'));
}

function markCliExecutable() {
  const cli = join(outdir, 'cli.js');
  chmodSync(cli, statSync(cli).mode | 0o111);
}

/** @type {esbuild.Plugin} */
const afterBuild = {
  name: 'after-build',
  setup(build) {
    build.onEnd((result) => {
      if (result.errors.length === 0 && build.initialOptions.entryPoints?.cli) markCliExecutable();
    });
  },
};

/**
 * dist/sample-db.tar.gz: the generated sample database, restored by a first open instead of generated
 * (5.9 s and ~600 MiB of RSS in the extension host before). Built once per content of the generator
 * (cached under node_modules/.cache by a hash of its sources and PGlite's version), ~5 s when it changes.
 */
async function sampleImage() {
  const sources = ['openSampleDb.ts', 'sampleSchema.ts', 'sampleData.ts'].map((f) =>
    readFileSync(join('src/core/db/sample', f)),
  );
  const pgliteVersion = JSON.parse(
    readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8'),
  ).version;
  const hash = createHash('sha256').update(pgliteVersion);
  for (const source of sources) hash.update(source);
  const cacheDir = join('node_modules', '.cache', 'pgagent-sample-image');
  const cached = join(cacheDir, `${hash.digest('hex').slice(0, 16)}.tar.gz`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const script = join(cacheDir, 'writeSampleImage.cjs');
    await esbuild.build({
      ...nodeCommon,
      sourcemap: false,
      minify: false,
      logLevel: 'error',
      entryPoints: ['src/core/db/sample/writeSampleImage.ts'],
      outfile: script,
      packages: 'external',
    });
    const started = Date.now();
    execFileSync(process.execPath, [script, `${cached}.tmp`], { stdio: 'inherit' });
    renameSync(`${cached}.tmp`, cached);
    console.log(
      `sample database image built in ${Date.now() - started} ms (${Math.round(statSync(cached).size / 1024)} KiB)`,
    );
  }
  mkdirSync(outdir, { recursive: true });
  copyFileSync(cached, join(outdir, 'sample-db.tar.gz'));
}

// A one-off build starts from an empty dist/ so no stale bundle or map ends up in the .vsix.
if (!watch) rmSync(outdir, { recursive: true, force: true });
copyAssets();
await sampleImage();
const contexts = await Promise.all(builds.map((options) => esbuild.context({ ...options, plugins: [afterBuild] })));
if (watch) {
  await Promise.all(contexts.map((ctx) => ctx.watch()));
} else {
  await Promise.all(contexts.map((ctx) => ctx.rebuild()));
  await Promise.all(contexts.map((ctx) => ctx.dispose()));
}
