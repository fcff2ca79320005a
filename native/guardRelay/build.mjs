// Builds dist/guardRelay.node (the guard's native relay) with the machine's g++ and Node's own headers. Never fails
// the build: without a compiler or headers the guard runs on its JavaScript path (and logs so).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', '..', 'dist', 'guardRelay.node');
const headers = [join(dirname(process.execPath), '..', 'include', 'node'), '/usr/include/node'].find((dir) =>
  existsSync(join(dir, 'node_api.h')),
);
if (process.platform !== 'linux') {
  console.log('guardRelay: not built (Linux only); the guard uses its JavaScript path');
} else if (!headers) {
  console.log('guardRelay: not built (no Node headers: node_api.h); the guard uses its JavaScript path');
} else {
  try {
    mkdirSync(dirname(out), { recursive: true });
    execFileSync(
      process.env.CXX ?? 'g++',
      [
        '-O2',
        '-std=c++17',
        '-shared',
        '-fPIC',
        '-pthread',
        '-Wall',
        '-Wextra',
        `-I${headers}`,
        '-DNODE_GYP_MODULE_NAME=guardRelay',
        join(here, 'guardRelay.cc'),
        '-o',
        out,
      ],
      { stdio: 'inherit' },
    );
    console.log(`guardRelay: built ${out}`);
  } catch (error) {
    console.log(
      `guardRelay: not built (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); the guard uses its JavaScript path`,
    );
  }
}
