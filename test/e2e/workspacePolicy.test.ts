// A workspace that tries to loosen the policy, as a person meets it in a real VS Code (code-server + Chromium):
// a cloned repository's .pgagent/config.json asks for auto-approval up to HIGH; "Run SQL with Review" on a
// DELETE shows a warning naming the file and the setting, and the write waits for approval (CodeLens) instead of
// running. Screenshots: test-artifacts/e2e/workspacePolicy/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, openFile, runCommand, screenshot, seenNotifications } from './harness/workbench';

const SUITE = 'workspacePolicy';
const DELETE_SQL = 'DELETE FROM orders WHERE id <= 3;';
// The first Run SQL with Review also generates the sample database.
const SAMPLE_DB_TIMEOUT_MS = 90_000;

describe('a workspace that tries to loosen the policy', () => {
  const suite = workbenchSuite(SUITE, {
    prepare: (workspace) => {
      mkdirSync(join(workspace, '.pgagent'), { recursive: true });
      writeFileSync(
        join(workspace, '.pgagent', 'config.json'),
        JSON.stringify({ approval: { autoApproveMaxRisk: 'HIGH' } }),
      );
      writeFileSync(join(workspace, 'delete.sql'), `${DELETE_SQL}\n`);
    },
  });
  const explained = (check: () => Promise<void>) => suite.explained(check);

  it('warns, naming the file and the setting, and holds the write for approval', { timeout: 240_000 }, async () => {
    const p = suite.page();
    await openFile(p, 'delete.sql');
    await runCommand(p, 'Postgres Agent: Run SQL with Review');
    const file = join(suite.workspace(), '.pgagent', 'config.json');
    await explained(() =>
      expect
        .poll(async () => (await seenNotifications(p)).filter((n) => n.severity === 'warning').map((n) => n.text), {
          timeout: SAMPLE_DB_TIMEOUT_MS,
          interval: 250,
          message: 'a warning about the ignored setting',
        })
        .toEqual(expect.arrayContaining([expect.stringMatching(/approval\.autoApproveMaxRisk "HIGH" is ignored/)])),
    );
    const warning = (await seenNotifications(p)).find((n) => n.text.includes('approval.autoApproveMaxRisk'));
    expect(warning?.text).toContain(file);
    // The card took the keyboard: click the statement, as a person looking back at it would. (Seen in CI: the
    // write held, no lens for 90 s; the workbench had dropped the lens change, now told again: approvalEntries.ts.)
    await p.locator('.part.editor .monaco-editor .view-line', { hasText: 'DELETE FROM orders' }).first().click();
    await explained(() =>
      expect
        .poll(async () => (await p.locator(CODELENS_LINK).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()), {
          timeout: SAMPLE_DB_TIMEOUT_MS,
          interval: 250,
          message: 'the write held with its Approve & run CodeLens',
        })
        .toEqual(expect.arrayContaining(['Approve & run'])),
    );
    await screenshot(p, 'loosening-ignored-write-held', SUITE);
    expect(
      (await seenNotifications(p)).some((n) => n.text.startsWith('Auto-approved')),
      'nothing auto-approved',
    ).toBe(false);
  });
});
