// Schema changes in a real VS Code (code-server + Chromium), as a person meets them (SPEC §5.4a): a CREATE
// INDEX held for approval shows the lock it takes on the table with the table's size and a lint finding with
// a safer statement; "Use the safer statement" reviews CREATE INDEX CONCURRENTLY as a new write, whose card
// says it cannot be rolled back. Screenshots of each step: test-artifacts/e2e/ddlImpact/.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { editorText, reviewFile, screenshot, seenNotifications } from './harness/workbench';
import { cardStatus, clickOnCard, waitForCardStatus } from './harness/approvalCards';

const SUITE = 'ddlImpact';
const INDEX_SQL = 'CREATE INDEX ON orders (status)';
const SAFER_SQL = 'CREATE INDEX CONCURRENTLY ON orders (status)';
// The first Run SQL with Review also generates the sample database.
const SAMPLE_DB_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 30_000;

describe('Schema changes in VS Code: locks, lint and the safer statement', () => {
  const suite = workbenchSuite(SUITE, {
    prepare: (workspace) => writeFileSync(join(workspace, 'index.sql'), `${INDEX_SQL}\n`),
  });
  const workbench = () => suite.page();

  it('holds CREATE INDEX with the lock it takes, the table size and the CONCURRENTLY form', async () => {
    const p = workbench();
    const before = (await seenNotifications(p)).length;
    await reviewFile(p, 'index.sql');
    const card = await waitForCardStatus(suite, INDEX_SQL, 'pending', { timeout: SAMPLE_DB_TIMEOUT_MS });
    await screenshot(p, 'create-index-held-with-lock-and-lint', SUITE);
    expect(card?.locks, 'lock lines').toContainEqual(
      expect.stringMatching(/^Blocks writes of public\.orders — [\d,.]+k? rows, [\d.]+ (kB|MB) — .*\(SHARE\)$/),
    );
    expect(
      card?.lint.map((l) => l.rule),
      'lint rules',
    ).toContain('require-concurrent-index-creation');
    expect(card?.lint.find((l) => l.rule === 'require-concurrent-index-creation')?.safer).toBe(SAFER_SQL);
    expect(card?.buttons, 'card buttons').toEqual(
      expect.arrayContaining(['approve-button', 'reject-button', 'use-safer-button']),
    );
    expect(card?.notTransactional, 'a plain CREATE INDEX rolls back').toBe('');
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });

  it('"Use the safer statement" reviews CREATE INDEX CONCURRENTLY as a new write that cannot be rolled back', async () => {
    const p = workbench();
    const before = (await seenNotifications(p)).length;
    await clickOnCard(p, INDEX_SQL, 'use-safer-button');
    const safer = await waitForCardStatus(suite, SAFER_SQL, 'pending', { timeout: UI_TIMEOUT_MS });
    await screenshot(p, 'safer-statement-held-cannot-be-rolled-back', SUITE);
    expect(safer?.notTransactional).toMatch(/^Cannot be rolled back/);
    expect(safer?.locks).toContainEqual(
      expect.stringMatching(/^Takes SHARE UPDATE EXCLUSIVE on public\.orders .*\(blocks no reads or writes\)/),
    );
    expect(safer?.lint.map((l) => l.rule)).not.toContain('require-concurrent-index-creation');
    // The original is still waiting for a person: choosing the safer statement decides nothing on their behalf.
    expect(await cardStatus(p, INDEX_SQL)).toBe('pending');
    // The safer SQL is in an editor of its own, as the person will approve it.
    await expect.poll(() => editorText(p), { timeout: UI_TIMEOUT_MS }).toContain('CREATE INDEX CONCURRENTLY');
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });
});
