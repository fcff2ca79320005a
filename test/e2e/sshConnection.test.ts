// A connection through an SSH tunnel in a real VS Code (code-server + Chromium), as a person adds one:
// Add Connection… asks the server, the login, TLS and the tunnel one question at a time; the first
// connection shows the bastion's host key fingerprint in a modal and pins it; the schema tree shows the
// tables behind the bastion; the status bar says the tunnel is up; Test Connection… checks it step by step.
// The sshd is started by the test (its own config, host key and authorized key), never the machine's.
import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import type { TestSshd } from '../support/testSshd';
import { sshdAvailable, sshKeygenFingerprint, startTestSshd } from '../support/testSshd';
import { workbenchSuite } from './harness/suite';
import { notificationTexts, pickCommand, screenshot, typeInQuickInput } from './harness/workbench';

const SUITE = 'ssh-connection';
const UI_TIMEOUT_MS = 30_000;

const sshd = sshdAvailable();
if (!sshd.available) {
  if (process.env.CI === 'true') throw new Error(`CI=true and the SSH E2E cannot run: ${sshd.reason}`);
  console.warn(`\n!!!!! SKIPPING the SSH connection E2E: ${sshd.reason}\n`);
}

/** Answers the quick input whose title names `step`: replaces a prefilled value, or filters a pick, then Enter. */
async function answer(p: Page, step: string, text: string): Promise<void> {
  const widget = p.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: step }).waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  await typeInQuickInput(p, '');
  await p.keyboard.press('Control+A');
  if (text !== '') await p.keyboard.type(text);
  else await p.keyboard.press('Backspace');
  await p.keyboard.press('Enter');
  await widget.locator('.quick-input-title', { hasText: step }).waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

function treeRows(p: Page): Locator {
  return p.locator('.pane:has(.pane-header[aria-label^="Schema"]) .monaco-list-row');
}

async function treeLabels(p: Page): Promise<string[]> {
  return treeRows(p).locator('.label-name').allInnerTexts();
}

describe.skipIf(!sshd.available)('a connection through an SSH tunnel, in VS Code', () => {
  let server: TestSshd | undefined;
  let scratch: ScratchDatabase | undefined;
  const suite = workbenchSuite(SUITE);
  const workbench = () => suite.page();

  beforeAll(async () => {
    server = await startTestSshd();
    scratch = await createScratchDatabase('pgagent_e2e_ssh');
    await execSql(
      scratch.url,
      'CREATE TABLE orders_behind_bastion (id int PRIMARY KEY, total numeric); INSERT INTO orders_behind_bastion VALUES (1, 9.5);',
    );
  }, 60_000);

  afterAll(async () => {
    await scratch?.drop();
    await server?.stop();
  });

  it(
    'adds the connection step by step, pins the host key, and shows the tables behind the bastion',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      if (!server || !scratch) throw new Error('beforeAll did not start the sshd and the database');
      await pickCommand(p, 'Postgres Agent: Add Connection…');
      await answer(p, 'name', 'behind-bastion');
      await answer(p, 'host', '127.0.0.1');
      await answer(p, 'port', '5432');
      await answer(p, 'database', scratch.name);
      await answer(p, 'user', 'postgres');
      await answer(p, 'login', 'Password');
      await answer(p, 'password', '');
      await answer(p, 'TLS', 'disable');
      await answer(p, 'route', 'Through an SSH tunnel');
      await answer(p, 'SSH host', `${server.user}@127.0.0.1:${server.port}`);
      await answer(p, 'SSH login', 'Key file');
      await answer(p, 'SSH key file', server.clientKey.privateKey);
      await screenshot(p, 'jump-hosts-step', SUITE);
      await answer(p, 'jump hosts', '');

      // First connection: the bastion's fingerprint, as OpenSSH computes it, in a modal; pinned on accept.
      const dialog = p.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await expect
        .poll(() => dialog.innerText(), { timeout: UI_TIMEOUT_MS })
        .toContain(sshKeygenFingerprint(server.hostKey.publicKey));
      await screenshot(p, 'host-key-fingerprint', SUITE);
      await dialog.locator('.monaco-button', { hasText: 'Pin Key and Connect' }).first().click();
      await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });

      // The status bar says the tunnel is up, naming the bastion.
      const bar = p.locator('.part.statusbar');
      await suite.explained(() =>
        expect
          .poll(() => bar.innerText(), { timeout: 60_000, message: 'the tunnel in the status bar' })
          .toContain(`tunnel: ${server?.user ?? ''}@127.0.0.1:${server?.port ?? 0}`),
      );

      // The schema tree (under the Postgres Agent icon) shows the database behind the bastion.
      const activity = p.locator('.activitybar .action-item:has(.action-label[aria-label^="Postgres Agent"])').first();
      if (!(await activity.evaluate((e) => e.classList.contains('checked') || e.querySelector('.checked') !== null)))
        await activity.click();
      const schema = p.locator('.pane-header[aria-label^="Schema"]').first();
      await schema.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      if ((await schema.getAttribute('aria-expanded')) === 'false') await schema.click();
      await suite.explained(() =>
        expect.poll(() => treeLabels(p), { timeout: 60_000, message: 'the public schema' }).toContain('public'),
      );
      await treeRows(p)
        .filter({ has: p.locator('.label-name', { hasText: /^public$/ }) })
        .first()
        .click();
      await suite.explained(() =>
        expect.poll(() => treeLabels(p), { timeout: UI_TIMEOUT_MS }).toContain('orders_behind_bastion'),
      );
      await screenshot(p, 'schema-tree-through-tunnel', SUITE);

      // The workspace's config holds the tunnel and no secret; the SSH connection is the test sshd's.
      expect(server.sessions().length).toBeGreaterThanOrEqual(1);
      const config = readFileSync(`${suite.workspace()}/.pgagent/config.json`, 'utf8');
      expect(JSON.parse(config)).toMatchObject({
        connections: [
          {
            name: 'behind-bastion',
            ssh: { host: '127.0.0.1', port: server.port, auth: 'key', keyFile: server.clientKey.privateKey },
          },
        ],
      });
      expect(config).not.toMatch(/password|passphrase/i);
    },
  );

  it(
    'Test Connection… checks the tunnel, the server, the login and a read, one step at a time',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      await pickCommand(p, 'Postgres Agent: Test Connection…');
      await typeInQuickInput(p, 'behind-bastion');
      await p.keyboard.press('Enter');
      await suite.explained(() =>
        expect
          .poll(() => notificationTexts(p), { timeout: 60_000, message: 'the result of the test' })
          .toEqual(
            expect.arrayContaining([
              expect.stringContaining('behind-bastion works. ✓ SSH tunnel ✓ Reach the server ✓ Log in ✓ Read'),
            ]),
          ),
      );
      await screenshot(p, 'test-connection-passed', SUITE);
    },
  );
});
