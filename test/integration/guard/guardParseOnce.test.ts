/**
 * One statement, parsed once on its way through the guard: the real `pg-agent guard` (in this process, so that
 * the parser's own counter, core/sql/parse.ts parseCount, is the guard's) in front of a scratch database, with
 * a real client. A read via the simple protocol is parsed once, via the extended protocol twice (its text with
 * `$n`, then the same with each `$n` a typed NULL, which is judged); a held write is parsed once for its
 * judgement, its impact and its ticket, and its approved retry once for its judgement and its run (the parse
 * carried as the core's CheckedSql), with the statement run once and the table changed. The same write with a
 * parameter is judged twice (at Parse for any value, at Bind with its value), and parsed no more than that.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run';
import { parseCount } from '../../../src/core/sql/parse';
import { runPgAgent } from '../../support/cliHarness';
import type { ScratchDatabase } from '../../support/scratchDatabase';
import { createScratchDatabase, queryValue } from '../../support/scratchDatabase';

let scratch: ScratchDatabase;
let workspace: string;
let guardUrl: string;
let stopped: Promise<number>;
const env = () => ({ HOME: join(workspace, 'home'), USER: 'i38f-parse-once' });

/** Parses while `run` ran. */
async function parsesOf(run: () => Promise<unknown>): Promise<number> {
  const before = parseCount();
  await run();
  return parseCount() - before;
}

beforeAll(async () => {
  scratch = await createScratchDatabase('pgagent_parse_once');
  await queryValue(scratch.url, 'CREATE TABLE item (id int PRIMARY KEY, qty int NOT NULL)');
  await queryValue(scratch.url, 'INSERT INTO item SELECT g, 0 FROM generate_series(1, 20) g');
  workspace = mkdtempSync(join(tmpdir(), 'pgagent-parse-once-'));
  const added = await runPgAgent(
    ['guard', 'users', 'add', 'alice', '--json', '--workspace', workspace, '--db', scratch.url],
    {
      cwd: workspace,
      env: env(),
    },
  );
  expect(added.code).toBe(0);
  const template = new URL((JSON.parse(added.stdout) as { url: string }).url);
  let stderr = '';
  let listening: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => (listening = resolve));
  stopped = runCli(['guard', '--listen', '127.0.0.1:0', '--workspace', workspace, '--db', scratch.url], {
    stdout: () => undefined,
    stderr: (text) => {
      stderr += text;
      const match = /pg-agent guard: postgresql:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
      if (match) listening(Number(match[1]));
    },
    readStdin: () => Promise.resolve(''),
    isTTY: false,
    env: env(),
    cwd: workspace,
  });
  template.port = String(
    await Promise.race([port, stopped.then((code) => Promise.reject(new Error(`${code} ${stderr}`)))]),
  );
  guardUrl = template.toString();
}, 120_000);

afterAll(async () => {
  // The guard in this process stops as on Ctrl+C.
  process.emit('SIGINT');
  await stopped;
  await scratch?.drop();
  rmSync(workspace, { recursive: true, force: true });
});

describe('a statement through the guard is parsed once', () => {
  it('a read, simple and extended protocol; a held write and its approved retry', async () => {
    const client = new pg.Client({ connectionString: guardUrl });
    await client.connect();
    try {
      // The parser and the code catalog load on the first statement; counted from the second.
      await client.query('SELECT 1');
      const parses = {
        simpleRead: await parsesOf(() => client.query('SELECT qty FROM item WHERE id = 3')),
        extendedRead: await parsesOf(() => client.query('SELECT qty FROM item WHERE id > $1 ORDER BY id', [17])),
        heldWrite: 0,
        approvedRetry: 0,
      };

      const write = 'UPDATE item SET qty = qty + 1 WHERE id = 5';
      let heldMessage = '';
      parses.heldWrite = await parsesOf(() =>
        client.query(write).catch((error: Error & { code?: string }) => {
          expect(error.code).toBe('PA001');
          heldMessage = error.message;
        }),
      );
      const ticket = /ticket (tkt_[a-z0-9]+)/.exec(heldMessage)?.[1];
      expect(ticket).toBeDefined();
      expect(await queryValue(scratch.url, 'SELECT qty FROM item WHERE id = 5')).toBe(0);

      const approved = await runPgAgent(
        ['approvals', 'approve', ticket!, '--workspace', workspace, '--db', scratch.url],
        {
          cwd: workspace,
          env: env(),
        },
      );
      expect(approved.code).toBe(0);
      let tag = '';
      parses.approvedRetry = await parsesOf(async () => {
        const result = await client.query(write);
        tag = `${result.command} ${result.rowCount}`;
      });
      expect(tag).toBe('UPDATE 1');
      expect(await queryValue(scratch.url, 'SELECT qty FROM item WHERE id = 5')).toBe(1);
      // Extended: the Parse's text (its $n places and transaction control, read from one parse), then that text with
      // each $n as a typed NULL, which is what is judged.
      expect(parses).toEqual({ simpleRead: 1, extendedRead: 2, heldWrite: 1, approvedRetry: 1 });

      // The same write with a parameter (extended protocol): its Parse judges the text with $1 as a typed NULL,
      // its Bind the text with the value (what the ticket holds and runs); the Execute's hold and the approved
      // run carry that parse.
      const extended = 'UPDATE item SET qty = qty + 1 WHERE id = $1';
      let extendedTicket = '';
      const extendedParses = { heldWrite: 0, approvedRetry: 0 };
      extendedParses.heldWrite = await parsesOf(() =>
        client.query(extended, [6]).catch((error: Error & { code?: string }) => {
          expect(error.code).toBe('PA001');
          extendedTicket = /ticket (tkt_[a-z0-9]+)/.exec(error.message)?.[1] ?? '';
        }),
      );
      expect(extendedTicket).not.toBe('');
      const approvedExtended = await runPgAgent(
        ['approvals', 'approve', extendedTicket, '--workspace', workspace, '--db', scratch.url],
        { cwd: workspace, env: env() },
      );
      expect(approvedExtended.code).toBe(0);
      extendedParses.approvedRetry = await parsesOf(async () => {
        const result = await client.query(extended, [6]);
        expect(result.rowCount).toBe(1);
      });
      expect(await queryValue(scratch.url, 'SELECT qty FROM item WHERE id = 6')).toBe(1);
      // Held: the text with $1 (its places, once), as a typed NULL at Parse, with its value at Bind (was 6: the
      // places and the NULL text again at Bind, and the impact's own parse); the retry: the last two (was 4).
      expect(extendedParses).toEqual({ heldWrite: 3, approvedRetry: 2 });
    } finally {
      await client.end();
    }
  }, 120_000);
});
