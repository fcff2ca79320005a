// Issue 25 in a real VS Code (code-server + Chromium), as a person meets it: the approval card of an ALTER
// TABLE names the session that holds a conflicting lock (pid, user, idle in transaction, its query), and the
// card of a DROP TABLE says what its way back is (moved to a quarantine schema, `pg-agent undo`) and what it
// costs. Nothing is approved here. Screenshots: test-artifacts/e2e/ddlWayBack/.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, openFile, reviewFile, screenshot, selectConnection } from './harness/workbench';
import { clickOnCard, lensesAbove, showCardLine, waitForCardStatus } from './harness/approvalCards';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';

const SUITE = 'ddlWayBack';
const UI_TIMEOUT_MS = 60_000;
const ALTER_SQL = 'ALTER TABLE notes ADD COLUMN extra int';
const DROP_SQL = 'DROP TABLE archive';

describe('Approved DDL in VS Code: who holds the lock, and the way back', () => {
  let scratch: ScratchDatabase;
  let holder: pg.Client | undefined;
  let holderPid = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_e2e_wayback');
    await execSql(
      scratch.url,
      `CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'one'), (2, 'two');
       CREATE TABLE archive (id int PRIMARY KEY, body text); INSERT INTO archive SELECT g, 'old ' || g FROM generate_series(1, 100) g;
       ANALYZE;`,
    );
    // A session that read notes and stays idle in transaction: the classic lock-queue outage waiting to happen.
    holder = new pg.Client({ connectionString: scratch.url, application_name: 'reporting-app' });
    await holder.connect();
    holderPid = Number((await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    await holder.query('BEGIN');
    await holder.query('SELECT count(*) FROM notes');
  });

  const suite = workbenchSuite(SUITE, {
    connections: () => ({ scratch }),
    // The person's own setting (user settings): three short tries instead of ten, so the test waits less.
    settings: { 'postgresAgent.query.ddlLockAttempts': 3 },
    prepare: (dir) => {
      writeFileSync(join(dir, 'alter.sql'), `${ALTER_SQL}\n`);
      writeFileSync(join(dir, 'drop.sql'), `${DROP_SQL}\n`);
    },
  });

  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    await scratch?.drop();
  });

  /** Whether the ALTER ran: the column it adds, counted in the catalog. */
  const extraColumns = async () =>
    Number(
      await queryValue(
        scratch.url,
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'notes' AND column_name = 'extra'",
      ),
    );

  it('the ALTER TABLE card names the idle-in-transaction session holding a conflicting lock', async () => {
    const p = suite.page();
    await selectConnection(p, 'scratch');
    await reviewFile(p, 'alter.sql');
    const card = await waitForCardStatus(suite, ALTER_SQL, 'pending', { timeout: UI_TIMEOUT_MS });
    await showCardLine(p, ALTER_SQL, 'lock-holder');
    await screenshot(p, 'alter-card-names-the-lock-holder', SUITE);
    expect(card?.holders).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^In the way: pid ${holderPid} \\(user postgres, idle in transaction for \\d+ (s|min), holds ACCESS SHARE on public\\.notes; query: SELECT count\\(\\*\\) FROM notes\\)$`,
        ),
      ),
    );
    expect(await extraColumns()).toBe(0);
  });

  it('approved while the lock is held, it does not run, says who holds it, and runs on "Run again" once they are gone', async () => {
    const p = suite.page();
    await openFile(p, 'alter.sql');
    await clickOnCard(p, ALTER_SQL, 'approve-button');
    // HIGH and above ask once more in a modal.
    const dialog = p.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 3_000 }).then(
      () => dialog.locator('.monaco-button', { hasText: 'Approve & run' }).first().click(),
      () => undefined,
    );
    // Three short tries (the user setting) with pauses between them: under a second.
    await waitForCardStatus(suite, ALTER_SQL, 'failed', {
      timeout: UI_TIMEOUT_MS,
      message: `the card of ${ALTER_SQL} after its tries`,
    });
    const lenses = await lensesAbove(
      suite,
      'ALTER TABLE notes',
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`Not run yet: Did not run: waited 3 × 100 ms .* behind pid ${holderPid} `)),
      ]),
      { timeout: UI_TIMEOUT_MS, message: 'the lens saying who holds the lock' },
    );
    expect(lenses.join(' | ')).toContain('Run again');
    await screenshot(p, 'alter-not-run-yet-lock-held', SUITE);
    expect(await extraColumns()).toBe(0);

    await holder?.query('COMMIT');
    await p.locator(CODELENS_LINK, { hasText: 'Run again' }).first().click();
    await waitForCardStatus(suite, ALTER_SQL, 'executed', {
      timeout: UI_TIMEOUT_MS,
      message: `the card of ${ALTER_SQL} after Run again`,
    });
    await screenshot(p, 'alter-ran-once-the-holder-was-gone', SUITE);
    expect(await extraColumns()).toBe(1);
  });

  it('the DROP TABLE card says the table is moved to a quarantine schema and how to bring it back', async () => {
    const p = suite.page();
    await reviewFile(p, 'drop.sql');
    const card = await waitForCardStatus(suite, DROP_SQL, 'pending', { timeout: UI_TIMEOUT_MS });
    await showCardLine(p, DROP_SQL, 'way-back');
    await screenshot(p, 'drop-card-shows-the-way-back', SUITE);
    expect(card?.wayBack.map((w) => w.way)).toEqual(['quarantine']);
    expect(card?.wayBack[0]?.text).toMatch(
      /^Way back: public\.archive \(100 rows, [\d.]+ kB\) is moved to a quarantine schema \(pgagent_q_…\) instead of dropped, kept 7 days; `pg-agent undo <ticket>` puts it back/,
    );
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM archive'))).toBe(100);
  });
});
