// Schema changes in a real VS Code (code-server + Chromium), as a person meets them (SPEC §5.4a): a CREATE
// INDEX held for approval shows the lock it takes on the table with the table's size and a lint finding with
// a safer statement; "Use the safer statement" reviews CREATE INDEX CONCURRENTLY as a new write, whose card
// says it cannot be rolled back. Screenshots of each step: test-artifacts/e2e/ddlImpact/.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { openFile, runCommand, screenshot, seenNotifications } from './harness/workbench';

const SUITE = 'ddlImpact';
const RUN_SQL = 'Postgres Agent: Run SQL with Review';
const INDEX_SQL = 'CREATE INDEX ON orders (status)';
const SAFER_SQL = 'CREATE INDEX CONCURRENTLY ON orders (status)';
const APPROVAL_CARD = '[data-testid="approval-card"]';
// The first Run SQL with Review also generates the sample database.
const SAMPLE_DB_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 30_000;

interface DdlCard {
  status: string;
  sql: string;
  locks: string[];
  lint: { rule: string; text: string; safer: string }[];
  notTransactional: string;
  buttons: string[];
}

async function ddlCards(page: Page): Promise<DdlCard[]> {
  const cards: DdlCard[] = [];
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    try {
      cards.push(
        ...(await frame.locator(APPROVAL_CARD).evaluateAll((elements) =>
          elements.map((card) => {
            const text = (node: Element | null) =>
              (node instanceof HTMLElement ? node.innerText : (node?.textContent ?? '')).replace(/\s+/g, ' ').trim();
            return {
              status: card.getAttribute('data-status') ?? '',
              sql: text(card.querySelector('pre.sql')),
              locks: [...card.querySelectorAll('[data-testid="lock-line"]')].map(text),
              lint: [...card.querySelectorAll('[data-testid="lint-finding"]')].map((finding) => ({
                rule: finding.getAttribute('data-rule') ?? '',
                text: text(finding),
                safer: text(finding.querySelector('[data-testid="safer-sql"]')),
              })),
              notTransactional: text(card.querySelector('[data-testid="not-transactional"]')),
              buttons: [...card.querySelectorAll('vscode-button[data-testid]')].map(
                (b) => b.getAttribute('data-testid') ?? '',
              ),
            };
          }),
        )),
      );
    } catch {
      // Detached while we read it.
    }
  }
  return cards;
}

async function cardFor(page: Page, sql: string): Promise<DdlCard | undefined> {
  return (await ddlCards(page)).find((card) => card.sql === sql);
}

async function frameWithCard(page: Page, sql: string): Promise<Frame> {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    try {
      const sqls = await frame.locator(`${APPROVAL_CARD} pre.sql`).allTextContents();
      if (sqls.some((t) => t.trim() === sql)) return frame;
    } catch {
      // Detached.
    }
  }
  throw new Error(`No webview shows a card for ${sql}`);
}

describe('Schema changes in VS Code: locks, lint and the safer statement', () => {
  const suite = workbenchSuite(SUITE, {
    prepare: (workspace) => writeFileSync(join(workspace, 'index.sql'), `${INDEX_SQL}\n`),
  });
  const workbench = () => suite.page();
  const explained = (check: () => Promise<void>) => suite.explained(check);

  it('holds CREATE INDEX with the lock it takes, the table size and the CONCURRENTLY form', async () => {
    const p = workbench();
    const before = (await seenNotifications(p)).length;
    await openFile(p, 'index.sql');
    await runCommand(p, RUN_SQL);
    await explained(() =>
      expect
        .poll(async () => (await cardFor(p, INDEX_SQL))?.status, {
          timeout: SAMPLE_DB_TIMEOUT_MS,
          interval: 250,
          message: `a pending card for ${INDEX_SQL}`,
        })
        .toBe('pending'),
    );
    const card = await cardFor(p, INDEX_SQL);
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
    const frame = await frameWithCard(p, INDEX_SQL);
    await frame
      .locator(`${APPROVAL_CARD}:has(pre.sql:text-is("${INDEX_SQL}")) vscode-button[data-testid="use-safer-button"]`)
      .first()
      .click();
    await explained(() =>
      expect
        .poll(async () => (await cardFor(p, SAFER_SQL))?.status, {
          timeout: UI_TIMEOUT_MS,
          interval: 250,
          message: `a pending card for ${SAFER_SQL}`,
        })
        .toBe('pending'),
    );
    const safer = await cardFor(p, SAFER_SQL);
    await screenshot(p, 'safer-statement-held-cannot-be-rolled-back', SUITE);
    expect(safer?.notTransactional).toMatch(/^Cannot be rolled back/);
    expect(safer?.locks).toContainEqual(
      expect.stringMatching(/^Takes SHARE UPDATE EXCLUSIVE on public\.orders .*\(blocks no reads or writes\)/),
    );
    expect(safer?.lint.map((l) => l.rule)).not.toContain('require-concurrent-index-creation');
    // The original is still waiting for a person: choosing the safer statement decides nothing on their behalf.
    expect((await cardFor(p, INDEX_SQL))?.status).toBe('pending');
    // The safer SQL is in an editor of its own, as the person will approve it.
    await expect
      .poll(
        async () =>
          (await p.locator('.part.editor .monaco-editor .view-lines').first().innerText()).replace(/\s+/g, ' '),
        { timeout: UI_TIMEOUT_MS },
      )
      .toContain('CREATE INDEX CONCURRENTLY');
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });
});
