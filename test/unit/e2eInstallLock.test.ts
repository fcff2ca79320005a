// The E2E tools' install lock (test/e2e/harness/tools.ts): runs on one machine that find the tools missing at
// once install them one at a time (an install starts by removing a half-finished one, so a second installer
// deleted the first one's files under it), and a lock left by a killed installer does not block later runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withInstallLock } from '../e2e/harness/tools';

describe('the E2E tools install lock', () => {
  const dirs: string[] = [];
  const cacheDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-e2e-lock-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('lets one installer in at a time and frees the lock after each, also after a failed install', async () => {
    const cache = cacheDir();
    let inside = 0;
    let most = 0;
    const ran: string[] = [];
    const install =
      (name: string, fail = false) =>
      async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 300));
        ran.push(name);
        inside--;
        if (fail) throw new Error(`${name} failed`);
      };
    const results = await Promise.allSettled([
      withInstallLock(cache, install('first', true)),
      withInstallLock(cache, install('second')),
      withInstallLock(cache, install('third')),
    ]);
    expect(most).toBe(1);
    expect(ran.sort()).toEqual(['first', 'second', 'third']);
    expect(results.map(({ status }) => status).sort()).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(existsSync(join(cache, '.install-lock'))).toBe(false);
  });

  it('takes over a lock whose installer is gone', async () => {
    const cache = cacheDir();
    // A pid that existed and has exited: the lock of an installer killed mid-install.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    mkdirSync(join(cache, '.install-lock'));
    writeFileSync(join(cache, '.install-lock', 'pid'), `${gone}\n`);
    let installed = false;
    await withInstallLock(cache, () => {
      installed = true;
      return Promise.resolve();
    });
    expect(installed).toBe(true);
    expect(existsSync(join(cache, '.install-lock'))).toBe(false);
  });
});
