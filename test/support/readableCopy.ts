/**
 * What another OS user runs (`nobody` as the broker, `daemon` as an approver), in a place that user can read.
 * A clone inside a folder only its owner can enter (`/root`, mode 700, as many home folders are) is out of their
 * reach ("Cannot find module dist/cli.js"): then the files are linked (or copied) once per test run into a
 * temporary folder every user can read, and that copy is what the other user runs. When even that cannot be
 * reached (node itself unreadable), the caller skips with a loud line saying why, never fails on where the clone
 * lives.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

// The checkout's dist/ (as CLI_PATH in mcpClient.ts): the benches load this file from a CommonJS bundle, where
// import.meta.url is undefined.
const DIST = join(process.cwd(), 'dist');
/** The CLI and the files it loads beside itself (the parser's and PGlite's WASM); not the extension's bundles. */
const CLI_FILES = /^(cli\.js|[\w-]+\.wasm|pglite\.data|sample-db\.tar\.gz)$/;

let shared: string | undefined;

/** Whether `uid` can read `file` (and run node): asked of the system as that user, not computed from modes. */
export function canRead(uid: number, file: string): boolean {
  const run = spawnSync(process.execPath, ['-e', `require('fs').accessSync(${JSON.stringify(file)}, 4)`], {
    uid,
    gid: uid,
    stdio: 'ignore',
  });
  return run.status === 0;
}

/** One folder per test process that every user can read, removed at exit. */
function sharedDir(): string {
  if (shared) return shared;
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-readable-'));
  chmodSync(dir, 0o755);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  shared = dir;
  return dir;
}

function place(source: string, target: string): void {
  if (existsSync(target)) return;
  try {
    // The same file (its own modes already let others read it), only reached through a folder they can enter.
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
    chmodSync(target, 0o755);
  }
}

export interface Readable {
  /** dist/cli.js, or its copy that `uid` can read. */
  cli: string;
  /** Other files the caller passes (e.g. a helper script), each as `uid` can read it. */
  files: string[];
  /** Set when nothing `uid` can run could be made: the reason for a loud skip. */
  unreadable?: string;
}

export function readableBy(uid: number, files: readonly string[] = []): Readable {
  const cli = join(DIST, 'cli.js');
  if (canRead(uid, cli) && files.every((f) => canRead(uid, f))) return { cli, files: [...files] };
  const dir = sharedDir();
  const distCopy = join(dir, 'dist');
  mkdirSync(distCopy, { recursive: true, mode: 0o755 });
  for (const name of readdirSync(DIST)) if (CLI_FILES.test(name)) place(join(DIST, name), join(distCopy, name));
  const copies = files.map((f) => {
    const target = join(dir, `${basename(dirname(f))}-${basename(f)}`);
    place(f, target);
    return target;
  });
  const copied = join(distCopy, 'cli.js');
  if (!canRead(uid, copied))
    return { cli: copied, files: copies, unreadable: `user ${uid} cannot run node or read ${copied}` };
  if (copied !== cli)
    console.warn(
      `\n!!!!! ${cli} is out of reach of OS user ${uid} (the clone is inside a folder only its owner can enter): that user runs a copy in ${distCopy}\n`,
    );
  return { cli: copied, files: copies };
}
