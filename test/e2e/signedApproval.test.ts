// A signed approval in a real VS Code (code-server + Chromium), as a person gives it (SPEC §5 3a): Create Approval
// Key asks a name and a passphrase twice (VS Code's password boxes) and keeps the key encrypted in SecretStorage,
// enrolling nobody (it offers the admin's enrol command); the team lists its public key with requireSignature; a
// held write's "Approve & run" CodeLens asks the passphrase: a wrong one decides nothing, the right one signs
// and the write runs, its decision verified by the CLI. Screenshots: test-artifacts/e2e/signedApproval/.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { teammateCli } from './harness/teammate';
import {
  answerPasswordBox,
  CODELENS_LINK,
  openFile,
  pickCommand,
  runCommand,
  screenshot,
  seenNotifications,
} from './harness/workbench';
import { lensTexts } from './harness/approvalCards';

const SUITE = 'signedApproval';
const RUN_SQL = 'Postgres Agent: Run SQL with Review';
const WRITE_SQL = 'UPDATE orders SET status = status WHERE id = 7;';
const SIGNER = 'window-signer';
const PASSPHRASE = 'correct horse battery';
// The first Run SQL with Review also generates the sample database.
const SAMPLE_DB_TIMEOUT_MS = 150_000;
const UI_TIMEOUT_MS = 30_000;

interface ShownTicket {
  id: string;
  status: string;
  sql: string;
  decisions: { by: string; approve: boolean; signed: boolean }[];
}

const suite = workbenchSuite(SUITE, {
  prepare: (workspace) => writeFileSync(join(workspace, 'update.sql'), `${WRITE_SQL}\n`),
});

/** `pg-agent` in a terminal of this workspace, as an observer with no keys. */
function pgAgent(args: string[]) {
  return teammateCli('observer', suite.workspace(), [...args, '--workspace', suite.workspace()]);
}

async function tickets(): Promise<ShownTicket[]> {
  const listed = await pgAgent(['approvals', 'list', '--all', '--json']);
  return listed.code === 0 ? (JSON.parse(listed.stdout) as ShownTicket[]) : [];
}

/** The pending lenses above the statement; VS Code refreshes lenses only of a focused editor, so click it if need be. */
async function waitForApproveLens(page: Page): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await lensTexts(page)).includes('Approve & run') && Date.now() < deadline) await page.waitForTimeout(250);
  if (!(await lensTexts(page)).includes('Approve & run')) {
    await page.locator('.part.editor .monaco-editor .view-line', { hasText: 'UPDATE orders' }).first().click();
  }
  await expect
    .poll(() => lensTexts(page), { timeout: UI_TIMEOUT_MS, message: 'the Approve & run lens' })
    .toContain('Approve & run');
}

describe('Signed approval from the CodeLens, with a passphrase-protected key', () => {
  it('makes a passphrase key, enrols nobody, and signs an Approve & run only with the right passphrase', async () => {
    const p = suite.page();
    const before = (await seenNotifications(p)).length;

    // 1. The key: a name, then a passphrase twice, in VS Code's own password boxes.
    await pickCommand(p, 'Postgres Agent: Create Approval Key…');
    const widget = p.locator('.quick-input-widget');
    await widget
      .locator('.quick-input-message', { hasText: 'Your name as an approver' })
      .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await p.keyboard.type(SIGNER);
    await p.keyboard.press('Enter');
    await answerPasswordBox(p, 'A passphrase for this key', PASSPHRASE);
    await answerPasswordBox(p, 'The same passphrase again', PASSPHRASE);
    let enroll = '';
    await expect
      .poll(
        async () =>
          (enroll =
            (await seenNotifications(p)).map((n) => n.text).find((t) => t.includes('pg-agent policy enroll')) ?? ''),
        { timeout: UI_TIMEOUT_MS },
      )
      .toContain(`pg-agent policy enroll ${SIGNER} --key`);
    await screenshot(p, 'key-made-enrol-command-offered', SUITE);
    // Making the key enrolled nobody.
    expect(existsSync(join(suite.workspace(), '.pgagent', 'config.json'))).toBe(false);
    const publicKey = /--key ([A-Za-z0-9_-]{43})/.exec(enroll)?.[1];
    if (!publicKey) throw new Error(`no public key in "${enroll}"`);

    // 2. The team lists the key and requires signatures (as an admin would commit it).
    mkdirSync(join(suite.workspace(), '.pgagent'), { recursive: true });
    writeFileSync(
      join(suite.workspace(), '.pgagent', 'config.json'),
      JSON.stringify({
        approval: { approvers: [{ name: SIGNER, publicKey, roles: [] }], policy: { requireSignature: true } },
      }),
    );

    // 3. A held write, approved from the CodeLens: a wrong passphrase decides nothing.
    await openFile(p, 'update.sql');
    await runCommand(p, RUN_SQL);
    await expect
      .poll(async () => (await tickets()).find((t) => t.sql.trim() === WRITE_SQL)?.status, {
        timeout: SAMPLE_DB_TIMEOUT_MS,
        interval: 500,
      })
      .toBe('PENDING_APPROVAL');
    await waitForApproveLens(p);
    await screenshot(p, 'write-held', SUITE);
    await p.locator(CODELENS_LINK, { hasText: 'Approve & run' }).first().click();
    await screenshot(p, 'passphrase-asked', SUITE);
    await answerPasswordBox(p, 'Passphrase of your approval key', 'not the passphrase');
    await expect
      .poll(
        async () =>
          (await seenNotifications(p))
            .slice(before)
            .map((n) => n.text)
            .join('\n'),
        { timeout: UI_TIMEOUT_MS },
      )
      .toContain('Wrong passphrase');
    await screenshot(p, 'wrong-passphrase-refused', SUITE);
    const held = (await tickets()).find((t) => t.sql.trim() === WRITE_SQL);
    expect(held).toMatchObject({ status: 'PENDING_APPROVAL', decisions: [] });

    // 4. The right passphrase: signed, and the write runs.
    await waitForApproveLens(p);
    await p.locator(CODELENS_LINK, { hasText: 'Approve & run' }).first().click();
    await answerPasswordBox(p, 'Passphrase of your approval key', PASSPHRASE);
    await expect
      .poll(async () => (await tickets()).find((t) => t.id === held?.id)?.status, {
        timeout: UI_TIMEOUT_MS,
        interval: 500,
      })
      .toBe('EXECUTED');
    const shown = await pgAgent(['approvals', 'show', held?.id ?? '', '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      status: 'EXECUTED',
      decisions: [{ by: SIGNER, approve: true, signed: true }],
    });
    const undo = readdirSync(join(suite.workspace(), '.pgagent', 'undo')).filter((f) => f.startsWith(held?.id ?? '-'));
    expect(undo.length, 'an undo script of the executed write').toBeGreaterThan(0);
    expect(readFileSync(join(suite.workspace(), '.pgagent', 'undo', undo[0] ?? ''), 'utf8')).toContain('UPDATE');
    await screenshot(p, 'signed-and-executed', SUITE);
  });
});
