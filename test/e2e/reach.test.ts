// The database's own code in a real VS Code (code-server + Chromium), as a person meets it (SPEC §5 1a): a
// "read" that calls a function running COPY … TO PROGRAM is held like a write with the function named; a
// DELETE whose BEFORE DELETE trigger runs a shell command is not previewed, and its card says why. Nothing
// runs: the files the shell commands would create are absent on the server. Screenshots: test-artifacts/e2e/reach/.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { reviewFile, screenshot, selectConnection } from './harness/workbench';
import { lensesAbove, showCardLine, waitForCardStatus } from './harness/approvalCards';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';

const SUITE = 'reach';
const UI_TIMEOUT_MS = 60_000;
const tag = randomBytes(4).toString('hex');
// The server runs as postgres on this machine and shares /tmp: a file there is what a shell command leaves.
const READ_MARK = `/tmp/pgagent-e2e-reach-read-${tag}`;
const TRIGGER_MARK = `/tmp/pgagent-e2e-reach-trigger-${tag}`;
const READ_SQL = 'SELECT shell_read() AS n';
const DELETE_SQL = 'DELETE FROM notes WHERE id = 1';

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
    connections: () => ({ scratch }),
    prepare: (dir) => {
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
    await selectConnection(p, 'scratch');
    await reviewFile(p, 'read.sql');
    const card = await waitForCardStatus(suite, READ_SQL, 'pending', { timeout: UI_TIMEOUT_MS });
    const lenses = await lensesAbove(
      suite,
      'SELECT shell_read',
      expect.arrayContaining([expect.stringMatching(/Runs public\.shell_read\(\)/)]),
      { timeout: UI_TIMEOUT_MS, message: 'the lens naming the function' },
    );
    expect(lenses.join(' | ')).toMatch(/HIGH · not previewed/);
    await showCardLine(p, READ_SQL, 'reach');
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
    await reviewFile(p, 'delete.sql');
    const card = await waitForCardStatus(suite, DELETE_SQL, 'pending', { timeout: UI_TIMEOUT_MS });
    await lensesAbove(
      suite,
      'DELETE FROM notes',
      expect.arrayContaining([expect.stringMatching(/Runs public\.rt_shell\(\)/)]),
      { timeout: UI_TIMEOUT_MS, message: 'the lens naming the trigger function' },
    );
    await showCardLine(p, DELETE_SQL, 'reach');
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
