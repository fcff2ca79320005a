// Extension activation time: require dist/extension.js and run activate() in a fresh process against a
// stand-in `vscode` module (every API a no-op), repeated in child processes; also checks that
// activation loads none of the heavy modules (dist/services.js: pg, PGlite, libpg-query).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Module from 'node:module';
import { join, resolve } from 'node:path';
import { percentile, report } from './stats';

const extension = resolve('dist', 'extension.js');

/** Where a path is asked for (extensionPath, globalStorageUri.fsPath, …): a real folder, as VS Code gives one. */
const STAND_IN_DIR = mkdtempSync(join(tmpdir(), 'pgagent-activation-'));
const isPathKey = (key: string | symbol) =>
  typeof key === 'string' && (key === 'fsPath' || key === 'path' || key.endsWith('Path'));

/** Any property, call or construction gives another stand-in, so the extension's calls all succeed. */
function standIn(): unknown {
  const target = function () {} as unknown as object;
  return new Proxy(target, {
    get: (_t, key) =>
      key === Symbol.toPrimitive
        ? () => 'stub'
        : key === 'then'
          ? undefined
          : isPathKey(key)
            ? STAND_IN_DIR
            : standIn(),
    apply: () => standIn(),
    construct: () => standIn() as object,
    set: () => true,
    defineProperty: () => true,
  });
}

/**
 * The module object itself needs real keys: the bundle copies them (esbuild's __toESM). Every value the host
 * reads from `vscode` (types alone need none): a module-level `new vscode.ThemeIcon(…)` crashed the bench once.
 */
const VSCODE_NAMESPACES = [
  'window',
  'workspace',
  'commands',
  'languages',
  'env',
  'lm',
  'Disposable',
  'EventEmitter',
  'ThemeColor',
  'ThemeIcon',
  'TreeItem',
  'TreeItemCollapsibleState',
  'StatusBarAlignment',
  'ProgressLocation',
  'ViewColumn',
  'Uri',
  'Range',
  'Position',
  'Diagnostic',
  'DiagnosticSeverity',
  'CodeLens',
  'Hover',
  'MarkdownString',
  'ConfigurationTarget',
  'RelativePattern',
  'FileType',
  'FileSystemError',
  'TabInputWebview',
  'McpStdioServerDefinition',
  'LanguageModelToolResult',
  'LanguageModelTextPart',
];
const vscodeModule = Object.fromEntries(VSCODE_NAMESPACES.map((name) => [name, standIn()]));

function measureOnce(): void {
  const loaded: string[] = [];
  const original = (Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown })._load;
  (Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown })._load = function (
    request: string,
    ...rest: unknown[]
  ) {
    if (request === 'vscode') return vscodeModule;
    loaded.push(request);
    return original.call(this, request, ...rest);
  };
  const start = performance.now();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the extension is a CommonJS bundle, loaded as VS Code does
  const ext = require(extension) as { activate(context: unknown): void };
  ext.activate(standIn());
  const ms = performance.now() - start;
  process.stdout.write(JSON.stringify({ ms, services: loaded.some((r) => r.includes('services')) }));
  // activate() starts timers (the approvals badge, watchers) that keep a real window's host alive: measured, done.
  process.exit(0);
}

if (process.argv[2] === 'once') {
  measureOnce();
} else {
  if (!existsSync(extension)) throw new Error('dist/extension.js is missing: run npm run build first.');
  const runs = 20;
  const results = Array.from(
    { length: runs },
    () =>
      JSON.parse(
        execFileSync(process.execPath, [join(__dirname, 'activation.bench.cjs'), 'once'], { encoding: 'utf8' }),
      ) as { ms: number; services: boolean },
  );
  const times = results.map((r) => r.ms);
  report(`activation: require + activate(), p50 of ${runs} fresh processes`, percentile(times, 50), 'ms');
  report('activation: p95', percentile(times, 95), 'ms');
  report(
    'activation: loads dist/services.js (pg, PGlite, parser)',
    results.some((r) => r.services) ? 'yes (BAD)' : 'no',
  );
}
