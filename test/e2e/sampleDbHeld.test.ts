// The sample database held by another process, as a person meets it in a real VS Code (code-server +
// Chromium): `pg-agent` in a terminal has the workspace's sample database open, so the window waits for it,
// then says who holds it and what to do, instead of opening a second PGlite on the same folder (which loses
// writes); once the terminal's command is gone, Retry opens it. Screenshots: test-artifacts/e2e/sampleDbHeld/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './harness/codeServer';
import { workbenchSuite } from './harness/suite';
import { findWebviewFrame, runCommand, screenshot, webviewTexts } from './harness/workbench';

const SUITE = 'sampleDbHeld';
const TABLE_ITEM = '[data-testid="table-item"]';
const SCHEMA_ERROR = '[data-testid="schema-error"]';
// The window waits 20 s for a holder to close it before it gives up; the holder's first open restores the image.
const HELD_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 30_000;

describe('the sample database held by pg-agent in a terminal', () => {
  const suite = workbenchSuite(SUITE);
  const workbench = () => suite.page();
  const explained = (check: () => Promise<void>) => suite.explained(check);
  let holder: ChildProcess | undefined;

  afterAll(() => {
    holder?.kill('SIGKILL');
  });

  it(
    'waits, then names the holder and what to do; Retry opens it once the holder is gone',
    { timeout: 240_000 },
    async () => {
      const p = workbench();
      const lockFile = join(suite.workspace(), '.pgagent', 'sample-db.lock');
      // A long read keeps the terminal's pg-agent (and so the sample database) busy for the whole wait.
      const child = spawn(
        process.execPath,
        [
          join(repoRoot, 'dist', 'cli.js'),
          'sql',
          '--db',
          'sample',
          '--timeout-ms',
          '150000',
          '--workspace',
          suite.workspace(),
          '--',
          'SELECT pg_sleep(120)',
        ],
        {
          cwd: suite.workspace(),
          env: { ...process.env, REDIS_URL: '' },
          stdio: 'ignore',
        },
      );
      holder = child;
      await expect
        .poll(() => existsSync(lockFile) && readFileSync(lockFile, 'utf8').includes(`"pid":${child.pid}`), {
          timeout: UI_TIMEOUT_MS,
          message: 'pg-agent holding the sample database',
        })
        .toBe(true);

      await runCommand(p, 'Postgres Agent: Open Sample Database');
      const panel = await findWebviewFrame(p, SCHEMA_ERROR, HELD_TIMEOUT_MS);
      const error = (await panel.locator(SCHEMA_ERROR).innerText()).replace(/\s+/g, ' ');
      expect(error).toContain(`is open in pg-agent sql (`);
      expect(error).toContain(`:${child.pid})`);
      expect(error).toContain('Let pg-agent sql finish, or stop it');
      expect(await webviewTexts(p, TABLE_ITEM), 'no tables from a second copy of the database').toEqual([]);
      await screenshot(p, 'held-by-terminal', SUITE);

      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
      await panel.locator(SCHEMA_ERROR).locator('vscode-button', { hasText: 'Retry' }).click();
      await explained(() =>
        expect
          .poll(async () => (await webviewTexts(p, TABLE_ITEM)).some((text) => /\borders\b/.test(text)), {
            timeout: HELD_TIMEOUT_MS,
            message: 'the sample tables after Retry',
          })
          .toBe(true),
      );
      await screenshot(p, 'opened-after-retry', SUITE);
      expect(readFileSync(lockFile, 'utf8')).toContain('"by":"VS Code"');
    },
  );
});
