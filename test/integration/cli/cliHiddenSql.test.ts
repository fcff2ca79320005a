/**
 * Issue 22, item 6, on a real pseudo-terminal: a statement whose comment holds ESC[2K + CR draws a decoy
 * over itself when printed raw. `approvals show` and the `pg-agent sql` prompt must show the statement
 * that runs (stand-ins ␛ ␍ for the hidden characters) and flag it; a flagged statement needs "yes" typed
 * in full. Assertions read the screen as a terminal draws it, and the database.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { runOnTerminal, screenOf } from '../../support/terminal';

const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));
const REAL = "UPDATE items SET tag = 'owned-by-agent' WHERE id = 1";
const DECOY = "UPDATE items SET tag = 'reviewed' WHERE id = 1";
/** Printed raw, the terminal erases the line (ESC[2K), returns to its start (CR) and draws the decoy. */
const SPOOF = `${REAL} /*\u001b[2K\r${DECOY} */`;
/** A prompt waiting for an answer: "[y/N] " or '… Type "yes" to approve and run: '. */
const isPrompt = (out: string) => out.includes('[y/N] ') || out.includes('and run: ');

describe.runIf(postgresAvailable)(
  'SQL with hidden characters on a real terminal (pg-agent approvals show, sql prompt)',
  () => {
    let scratch: ScratchDatabase;
    let workspace: string;
    const tag = () => queryValue(scratch.url, 'SELECT tag FROM items WHERE id = 1');
    /** pg-agent on a pseudo-terminal; the SQL goes through the environment, byte for byte. */
    const onTerminal = (args: string, answer?: string, sql = SPOOF) =>
      runOnTerminal(`"$NODE" "$CLI" ${args} --db "$DB" --workspace "$WS" -- "$SQL"`, {
        cwd: workspace,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          USER: 'tester',
          TERM: 'xterm',
          NODE: process.execPath,
          CLI,
          DB: scratch.url,
          WS: workspace,
          SQL: sql,
        },
        ...(answer !== undefined
          ? { answer: (out: string, answered: number) => (answered === 0 && isPrompt(out) ? `${answer}\r` : undefined) }
          : {}),
      });

    beforeAll(async () => {
      expect(existsSync(CLI), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
      scratch = await createScratchDatabase();
      await execSql(
        scratch.url,
        "CREATE TABLE items (id int PRIMARY KEY, tag text NOT NULL); INSERT INTO items VALUES (1, 'new'), (2, 'new')",
      );
    });

    afterAll(async () => {
      await scratch?.drop();
    });

    beforeEach(async () => {
      workspace = mkdtempSync(join(tmpdir(), 'pgagent-hidden-'));
      await execSql(scratch.url, "UPDATE items SET tag = 'new'");
      return () => rmSync(workspace, { recursive: true, force: true });
    });

    it('approvals show draws the statement that runs, with ␛ and ␍, and flags it; no ESC reaches the terminal', async () => {
      const held = await runPgAgent(
        ['sql', '--db', scratch.url, '--workspace', workspace, '--no-input', '--json', '--', SPOOF],
        { cwd: workspace, env: { USER: 'agent' } },
      );
      expect(held.code).toBe(3);
      const ticket = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;

      const run = await runOnTerminal(`"$NODE" "$CLI" approvals show ${ticket} --workspace "$WS"`, {
        cwd: workspace,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TERM: 'xterm',
          NODE: process.execPath,
          CLI,
          WS: workspace,
        },
      });
      expect(run.code, run.raw).toBe(0);
      expect(run.raw).not.toContain('\u001b');
      expect(run.raw.replace(/\r\n/g, '')).not.toContain('\r');
      const screen = screenOf(run.raw);
      expect(screen, run.raw).toContain(`${REAL} /*␛[2K␍${DECOY} */`);
      expect(screen.find((l) => l.startsWith('! HIDDEN CHARACTERS'))).toContain(
        '2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍',
      );
      // The JSON stays the exact SQL: it is data, not display.
      const json = await runPgAgent(['approvals', 'show', ticket, '--json', '--workspace', workspace], {
        cwd: workspace,
      });
      expect((JSON.parse(json.stdout) as { sql: string }).sql).toBe(SPOOF);
      expect(await tag()).toBe('new');
    });

    it('exec of an approved ticket draws the statement that ran, with its stand-ins, and the database holds that one', async () => {
      const held = await runPgAgent(
        ['sql', '--db', scratch.url, '--workspace', workspace, '--no-input', '--json', '--', SPOOF],
        { cwd: workspace, env: { USER: 'agent' } },
      );
      const ticket = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
      expect(
        (
          await runPgAgent(['approvals', 'approve', ticket, '--workspace', workspace], {
            cwd: workspace,
            env: { USER: 'teammate' },
          })
        ).code,
      ).toBe(0);
      const run = await runOnTerminal(`"$NODE" "$CLI" exec --ticket ${ticket} --db "$DB" --workspace "$WS"`, {
        cwd: workspace,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          USER: 'teammate',
          TERM: 'xterm',
          NODE: process.execPath,
          CLI,
          DB: scratch.url,
          WS: workspace,
        },
      });
      expect(run.code, run.raw).toBe(0);
      expect(run.raw).not.toContain('\u001b');
      const screen = screenOf(run.raw);
      expect(screen, run.raw).toContain(`${REAL} /*␛[2K␍${DECOY} */`);
      expect(screen.some((l) => l.startsWith('! HIDDEN CHARACTERS'))).toBe(true);
      expect(await tag()).toBe('owned-by-agent');
    });

    it('the sql prompt shows the real statement and a reflexive "y" does not approve it: nothing runs', async () => {
      const run = await onTerminal('sql', 'y');
      const screen = screenOf(run.raw);
      expect(screen, run.raw).toContain(`${REAL} /*␛[2K␍${DECOY} */`);
      expect(
        screen.some((l) =>
          l.includes('This statement holds 2 hidden characters (shown above as ␛ ␍). Type "yes" to approve and run:'),
        ),
        run.raw,
      ).toBe(true);
      expect(run.code, run.raw).toBe(4);
      expect(screen.some((l) => l.startsWith('Rejected: nothing was run'))).toBe(true);
      expect(await tag()).toBe('new');
    });

    it('typing "yes" runs exactly the statement that was shown', async () => {
      const run = await onTerminal('sql', 'yes');
      expect(run.code, run.raw).toBe(0);
      expect(screenOf(run.raw)).toContain(`${REAL} /*␛[2K␍${DECOY} */`);
      expect(await tag()).toBe('owned-by-agent');
      expect(await queryValue(scratch.url, "SELECT count(*)::int FROM items WHERE tag = 'new'")).toBe(1);
    });

    it('a statement with nothing hidden is shown as it is and still takes y', async () => {
      const run = await onTerminal('sql', 'y', DECOY);
      const screen = screenOf(run.raw);
      expect(run.code, run.raw).toBe(0);
      expect(screen).toContain(DECOY);
      expect(screen.some((l) => l.includes('HIDDEN'))).toBe(false);
      expect(await tag()).toBe('reviewed');
    });
  },
);
