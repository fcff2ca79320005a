// The database's own code in a real VS Code (code-server + Chromium), as a person meets it (SPEC §5 1a): a
// "read" that calls a function running COPY … TO PROGRAM is held like a write with the function named; a
// DELETE whose BEFORE DELETE trigger runs a shell command is not previewed, and its card says why. Nothing
// runs: the files the shell commands would create are absent on the server. Screenshots: test-artifacts/e2e/reach/.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, openFile, pickCommand, runCommand, screenshot, typeInQuickInput } from './harness/workbench';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';

const SUITE = 'reach';
const RUN_SQL = 'Postgres Agent: Run SQL with Review';
const APPROVAL_CARD = '[data-testid="approval-card"]';
const UI_TIMEOUT_MS = 60_000;
const tag = randomBytes(4).toString('hex');
// The server runs as postgres on this machine and shares /tmp: a file there is what a shell command leaves.
const READ_MARK = `/tmp/pgagent-e2e-reach-read-${tag}`;
const TRIGGER_MARK = `/tmp/pgagent-e2e-reach-trigger-${tag}`;
const READ_SQL = 'SELECT shell_read() AS n';
const DELETE_SQL = 'DELETE FROM notes WHERE id = 1';

interface ReachCard {
  status: string;
  sql: string;
  risk: string;
  reach: { verdict: string; text: string }[];
  warnings: string[];
}

async function cards(page: Page): Promise<ReachCard[]> {
  const found: ReachCard[] = [];
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    try {
      found.push(
        ...(await frame.locator(APPROVAL_CARD).evaluateAll((elements) =>
          elements.map((card) => {
            const text = (node: Element | null) =>
              (node instanceof HTMLElement ? node.innerText : (node?.textContent ?? '')).replace(/\s+/g, ' ').trim();
            return {
              status: card.getAttribute('data-status') ?? '',
              sql: text(card.querySelector('pre.sql')),
              risk: text(card.querySelector('[data-testid="risk-badge"]')),
              reach: [...card.querySelectorAll('[data-testid="reach-entry"]')].map((e) => ({
                verdict: e.getAttribute('data-verdict') ?? '',
                text: text(e),
              })),
              warnings: [...card.querySelectorAll('.warning-text')].map(text),
            };
          }),
        )),
      );
    } catch {
      // Detached while we read it.
    }
  }
  return found;
}

const cardFor = async (page: Page, sql: string) => (await cards(page)).find((c) => c.sql === sql);

/** Scrolls the card of `sql` in the side panel so its reach and warnings are in the picture. */
async function showCardReach(page: Page, sql: string): Promise<void> {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    const reach = frame.locator(`${APPROVAL_CARD}:has(pre.sql:text-is("${sql}")) [data-testid="reach"]`).first();
    if ((await reach.count().catch(() => 0)) > 0) {
      await reach.scrollIntoViewIfNeeded().catch(() => undefined);
      return;
    }
  }
}

describe("The database's own code in VS Code: held reads and previews that do not run", () => {
  let scratch: ScratchDatabase;

  beforeAll(async () => {
    for (const file of [READ_MARK, TRIGGER_MARK]) rmSync(file, { force: true });
    scratch = await createScratchDatabase('pgagent_e2e_reach');
    await execSql(
      scratch.url,
      `CREATE TABLE notes (id int PRIMARY KEY, body text);
       INSERT INTO notes VALUES (1, 'one'), (2, 'two');
       CREATE FUNCTION shell_read() RETURNS int LANGUAGE plpgsql AS $f$
       BEGIN COPY (SELECT 1) TO PROGRAM 'touch ${READ_MARK}'; RETURN 1; END $f$;
       CREATE FUNCTION rt_shell() RETURNS trigger LANGUAGE plpgsql AS $f$
       BEGIN COPY (SELECT 1) TO PROGRAM 'touch ${TRIGGER_MARK}'; RETURN OLD; END $f$;
       CREATE TRIGGER rt_before_delete BEFORE DELETE ON notes FOR EACH ROW EXECUTE FUNCTION rt_shell();`,
    );
  });

  const suite = workbenchSuite(SUITE, {
    prepare: (dir) => {
      const url = new URL(scratch.url);
      mkdirSync(join(dir, '.pgagent'), { recursive: true });
      writeFileSync(
        join(dir, '.pgagent', 'config.json'),
        JSON.stringify({
          connections: [
            {
              name: 'scratch',
              host: url.hostname,
              port: Number(url.port || 5432),
              database: scratch.name,
              user: decodeURIComponent(url.username),
            },
          ],
        }),
      );
      writeFileSync(join(dir, 'read.sql'), `${READ_SQL}\n`);
      writeFileSync(join(dir, 'delete.sql'), `${DELETE_SQL}\n`);
    },
  });

  afterAll(async () => {
    for (const file of [READ_MARK, TRIGGER_MARK]) rmSync(file, { force: true });
    await scratch?.drop();
  });

  it('holds a "read" whose function runs a shell command, naming the function, and runs nothing', async () => {
    const p = suite.page();
    // The command opens its own pick: the palette's widget stays up for it (runCommand would wait for it to hide).
    await pickCommand(p, 'Postgres Agent: Select Connection…');
    await typeInQuickInput(p, 'scratch');
    await p.keyboard.press('Enter');
    await openFile(p, 'read.sql');
    await runCommand(p, RUN_SQL);
    await suite.explained(() =>
      expect
        .poll(async () => (await cardFor(p, READ_SQL))?.status, {
          timeout: UI_TIMEOUT_MS,
          interval: 250,
          message: `a pending card for ${READ_SQL}`,
        })
        .toBe('pending'),
    );
    const card = await cardFor(p, READ_SQL);
    // VS Code refreshes the CodeLenses of the editor that has the keyboard; the card took it: click the statement.
    await p.locator('.part.editor .monaco-editor .view-line', { hasText: 'SELECT shell_read' }).first().click();
    await expect
      .poll(async () => (await p.locator(CODELENS_LINK).allInnerTexts()).join(' | '), { timeout: UI_TIMEOUT_MS })
      .toMatch(/Runs public\.shell_read\(\)/);
    expect((await p.locator(CODELENS_LINK).allInnerTexts()).join(' | ')).toMatch(/HIGH · not previewed/);
    await showCardReach(p, READ_SQL);
    await screenshot(p, 'read-held-with-function-named', SUITE);
    expect(card?.reach.filter((r) => r.verdict === 'side-effect').map((r) => r.text)).toContainEqual(
      expect.stringMatching(/^public\.shell_read\(\) — .*PROGRAM/),
    );
    expect(card?.warnings.join('\n')).toMatch(/Not previewed: .*shell_read.*PROGRAM/);
    expect(['HIGH', 'CRITICAL']).toContain(card?.risk);
    // Nothing ran on the server: no file from the shell command.
    expect(existsSync(READ_MARK), `${READ_MARK} (written by the server if the function ran)`).toBe(false);
  });

  it('does not preview a DELETE whose trigger runs COPY … TO PROGRAM, and says so on the card', async () => {
    const p = suite.page();
    await openFile(p, 'delete.sql');
    await runCommand(p, RUN_SQL);
    await suite.explained(() =>
      expect
        .poll(async () => (await cardFor(p, DELETE_SQL))?.status, {
          timeout: UI_TIMEOUT_MS,
          interval: 250,
          message: `a pending card for ${DELETE_SQL}`,
        })
        .toBe('pending'),
    );
    const card = await cardFor(p, DELETE_SQL);
    await p.locator('.part.editor .monaco-editor .view-line', { hasText: 'DELETE FROM notes' }).first().click();
    await expect
      .poll(async () => (await p.locator(CODELENS_LINK).allInnerTexts()).join(' | '), { timeout: UI_TIMEOUT_MS })
      .toMatch(/Runs public\.rt_shell\(\)/);
    await showCardReach(p, DELETE_SQL);
    await screenshot(p, 'delete-not-previewed-trigger-named', SUITE);
    expect(card?.warnings.join('\n')).toMatch(/Not previewed: .*rt_shell.*rt_before_delete.*PROGRAM/);
    expect(card?.reach.filter((r) => r.verdict === 'side-effect').map((r) => r.text)).toContainEqual(
      expect.stringMatching(/^public\.rt_shell\(\) — .*rt_before_delete/),
    );
    expect(['HIGH', 'CRITICAL']).toContain(card?.risk);
    expect(existsSync(TRIGGER_MARK), `${TRIGGER_MARK} (written by the server if the preview ran the trigger)`).toBe(
      false,
    );
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM notes'))).toBe(2);
  });
});
