// Starts a throwaway code-server (VS Code in a browser) with the packaged extension installed, in fresh
// directories per run, and stops it by killing its whole process group. The .vsix is installed once per
// test run (globalSetup: installExtensionOnce) and each code-server gets its own copy of that folder.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureE2eTools } from './tools';

/** The repository root (this file is test/e2e/harness/codeServer.ts). */
export const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');

/**
 * The packaged extension the suite installs; `npm run package` writes it. PGAGENT_E2E_VSIX points the
 * suite at another build (e.g. a release artifact).
 */
export const vsixPath = process.env.PGAGENT_E2E_VSIX ?? join(repoRoot, 'dist', 'postgres-agent.vsix');

export interface CodeServerOptions {
  /** Absolute path of the folder opened as the workspace. */
  workspace: string;
  /** User settings added to (and overriding) the recipe's quiet defaults. */
  settings?: Record<string, unknown>;
  /** Environment for code-server and so for the extension host (e.g. DATABASE_URL). */
  env?: Record<string, string>;
  /** The .vsix to install; defaults to dist/postgres-agent.vsix. */
  vsix?: string;
  /** An extensions folder installExtensionOnce filled with this .vsix: copied instead of installing again. */
  installed?: string;
  /** If set, stop() copies code-server.log and VS Code's logs here before removing the run dir. */
  keepLogsIn?: string;
}

export interface CodeServer {
  url: string;
  port: number;
  runDir: string;
  stop(): Promise<void>;
}

// Settings that keep the workbench quiet and deterministic: no welcome page, trust prompt, update or AI UI.
const QUIET_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

// Variables from the developer's shell that would change what the extension connects to or, for
// VSCODE_*, make code-server hand its arguments to the VS Code it was started from. Tests that want
// them pass them explicitly in `env`.
const HOST_ONLY_ENV =
  /^(VSCODE_.*|ELECTRON_RUN_AS_NODE|NODE_OPTIONS|VITEST.*|DATABASE_URL|PG(HOST|HOSTADDR|PORT|DATABASE|USER|PASSWORD|PASSFILE|SERVICE|SSLMODE|OPTIONS))$/;

const HEALTH_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

/**
 * Installs `vsix` into a new extensions folder (with code-server's own user data beside it, in `runDir`) and
 * returns the folder; startCodeServer's `installed` copies it, so one test run installs the .vsix once.
 */
export async function installExtensionOnce(vsix: string = vsixPath): Promise<string> {
  const runDir = mkdtempSync(join(tmpdir(), 'pgagent-e2e-installed-'));
  try {
    const run = runDirs(runDir, {});
    await installExtension(run, vsix);
    return run.extensions;
  } catch (error) {
    rmSync(runDir, { recursive: true, force: true });
    throw error;
  }
}

interface RunDirs {
  userData: string;
  extensions: string;
  logPath: string;
  env: NodeJS.ProcessEnv;
  /** code-server's arguments naming the two folders. */
  dirs: string[];
}

function runDirs(runDir: string, extraEnv: Record<string, string>): RunDirs {
  const userData = join(runDir, 'user-data');
  const extensions = join(runDir, 'extensions');
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(extensions, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!HOST_ONLY_ENV.test(name)) env[name] = value;
  }
  Object.assign(env, {
    // Keeps code-server from writing its config and state into the home directory.
    XDG_CONFIG_HOME: join(runDir, 'xdg', 'config'),
    XDG_DATA_HOME: join(runDir, 'xdg', 'data'),
    ...extraEnv,
  });
  const dirs = ['--user-data-dir', userData, '--extensions-dir', extensions];
  return { userData, extensions, logPath: join(runDir, 'code-server.log'), env, dirs };
}

async function installExtension(run: RunDirs, vsix: string): Promise<void> {
  const tools = await ensureE2eTools();
  if (!existsSync(vsix)) {
    throw new Error(`The packaged extension ${vsix} is missing: run \`npm run package\` first.`);
  }
  const code = await runLogged(
    tools.node24,
    [tools.codeServerEntry, '--install-extension', vsix, ...run.dirs],
    run.env,
    run.logPath,
  );
  if (code !== 0) {
    throw new Error(`code-server --install-extension ${vsix} failed (exit ${String(code)}):\n${tail(run.logPath)}`);
  }
}

/** Copies an installed extensions folder; its extensions.json names each extension by its absolute path. */
function copyInstalled(installed: string, extensions: string): void {
  cpSync(installed, extensions, { recursive: true });
  const index = join(extensions, 'extensions.json');
  writeFileSync(index, readFileSync(index, 'utf8').split(installed).join(extensions));
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const tools = await ensureE2eTools();
  const runDir = mkdtempSync(join(tmpdir(), 'pgagent-e2e-'));
  const run = runDirs(runDir, options.env ?? {});
  const { userData, logPath, env, dirs } = run;

  let child: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    if (child !== undefined) await killGroup(child);
    child = undefined;
    if (options.keepLogsIn !== undefined) copyLogs(runDir, options.keepLogsIn);
    if (process.env.PGAGENT_E2E_KEEP_RUN === '1') {
      process.stderr.write(`[e2e] kept code-server run dir ${runDir}\n`);
    } else {
      rmSync(runDir, { recursive: true, force: true });
    }
  };

  try {
    if (options.installed === undefined) await installExtension(run, options.vsix ?? vsixPath);
    else copyInstalled(options.installed, run.extensions);
    writeFileSync(
      join(userData, 'User', 'settings.json'),
      `${JSON.stringify({ ...QUIET_SETTINGS, ...options.settings }, null, 2)}\n`,
    );

    const port = await freePort();
    const fd = openSync(logPath, 'a');
    try {
      child = spawn(
        tools.node24,
        [
          tools.codeServerEntry,
          '--bind-addr',
          `127.0.0.1:${port}`,
          '--auth',
          'none',
          '--disable-telemetry',
          '--disable-update-check',
          '--disable-workspace-trust',
          '--disable-getting-started-override',
          '--ignore-last-opened',
          ...dirs,
          options.workspace,
        ],
        // Its own process group, so stop() also ends the extension host and other children.
        { env, detached: true, stdio: ['ignore', fd, fd] },
      );
    } finally {
      closeSync(fd);
    }
    const url = `http://127.0.0.1:${port}`;
    await waitForHealth(url, child, logPath);
    return { url, port, runDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A loopback port nobody listens on right now (the kernel picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess, logPath: string): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `code-server exited before it was healthy (${String(child.exitCode ?? child.signalCode)}):\n${tail(logPath)}`,
      );
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(250);
  }
  throw new Error(`code-server did not answer ${url}/healthz within ${HEALTH_TIMEOUT_MS / 1000} s:\n${tail(logPath)}`);
}

async function killGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  signalGroup(pid, 'SIGTERM');
  const graceful = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
  if (!graceful) {
    signalGroup(pid, 'SIGKILL');
    await exited;
  }
  // Children that ignored SIGTERM (extension host, file watcher) go with the group.
  signalGroup(pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

async function runLogged(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logPath: string,
): Promise<number | string> {
  const fd = openSync(logPath, 'a');
  try {
    return await new Promise((resolveCode, reject) => {
      const child = spawn(command, args, { env, stdio: ['ignore', fd, fd] });
      child.on('error', reject);
      child.on('exit', (code, signal) => resolveCode(code ?? signal ?? 'unknown'));
    });
  } finally {
    closeSync(fd);
  }
}

function copyLogs(runDir: string, target: string): void {
  mkdirSync(target, { recursive: true });
  const log = join(runDir, 'code-server.log');
  if (existsSync(log)) cpSync(log, join(target, 'code-server.log'));
  const vscodeLogs = join(runDir, 'user-data', 'logs');
  if (existsSync(vscodeLogs)) cpSync(vscodeLogs, join(target, 'vscode-logs'), { recursive: true });
}

function tail(path: string, lines = 40): string {
  if (!existsSync(path)) return '(no log)';
  return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
}

async function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}
