/**
 * What tripped a newcomer, on the real CLI against a real server: `exec --ticket` on the ticket's own database
 * (no --db, no DATABASE_URL; another --db is refused naming both), one executor per write (a guard client's
 * ticket runs on the client's retry, an agent's with execute_approved: exec refuses them, --force only for the
 * requester), `approvals list` pending by default with database, risk, age and origin, argument errors with the
 * closest match, exit codes with one meaning each, and an undo you can read.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import { pgAgentProcess } from '../../support/cliProcess';
import { pgAgentMcp } from '../../support/mcpClient';
import { startGuardProcess } from '../../support/guardProcess';
import type { GuardProcess } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { SHOP_DATA_FINGERPRINT, SHOP_SCHEMA } from '../../support/shopSchema';

const ticketOf = (stdout: string) => /ticket (tkt_\w+)/.exec(stdout)?.[1] ?? '';

describe.runIf(postgresAvailable)('pg-agent for a newcomer: tickets that know their database', () => {
  let scratch: ScratchDatabase;
  let other: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-newcomer-'));
  /** No DATABASE_URL, no PG*: only what the command line says. */
  const cli = (argv: string[], env: Record<string, string> = {}) =>
    runPgAgent([...argv, '--workspace', workspace], { cwd: workspace, env: { USER: 'newcomer', ...env } });
  const count = (sql: string) => queryValue(scratch.url, sql).then(Number);

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    other = await createScratchDatabase();
    await execSql(scratch.url, SHOP_SCHEMA);
    await execSql(other.url, SHOP_SCHEMA);
  });
  afterAll(async () => {
    await scratch?.drop();
    await other?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('exec --ticket runs on the database the ticket was made on; another --db is refused naming both', async () => {
    const held = await cli(['sql', '--db', scratch.url, '--no-input', '--', 'DELETE FROM order_items WHERE id <= 3']);
    expect(held.code).toBe(3);
    const id = ticketOf(held.stdout);
    // The printed next steps carry no --db: they run as printed.
    expect(held.stdout).toContain(`  run:     pg-agent exec --ticket ${id}\n`);

    const unapproved = await cli(['exec', '--ticket', id]);
    expect(unapproved.code, unapproved.stderr).toBe(4);
    expect(await count('SELECT count(*) FROM order_items WHERE id <= 3')).toBe(3);

    expect((await cli(['approvals', 'approve', id])).stdout).toContain(`Run it with: pg-agent exec --ticket ${id}`);
    const elsewhere = await cli(['exec', '--ticket', id, '--db', other.url]);
    expect(elsewhere.code, elsewhere.stderr).toBe(2);
    expect(elsewhere.stderr).toContain(other.name);
    expect(elsewhere.stderr).toContain(scratch.name);
    expect(Number(await queryValue(other.url, 'SELECT count(*) FROM order_items WHERE id <= 3'))).toBe(3);

    // As printed, from a shell with no database settings: the ticket's own database.
    const ran = await cli(['exec', '--ticket', id]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await count('SELECT count(*) FROM order_items WHERE id <= 3')).toBe(0);
    expect(ran.stdout).toContain(`  way back: pg-agent undo ${id}\n`);
    expect(ran.stdout).not.toMatch(/^Undo script: $/m);
    expect(Number(await queryValue(other.url, 'SELECT count(*) FROM order_items WHERE id <= 3'))).toBe(3);
  });

  it('approvals list shows what waits, with database, risk, age and origin; --all shows the rest', async () => {
    const held = await cli([
      'sql',
      '--db',
      scratch.url,
      '--no-input',
      '--',
      "UPDATE customers SET name = 'x' WHERE id = 1",
    ]);
    const pending = ticketOf(held.stdout);
    const list = await cli(['approvals', 'list']);
    expect(list.code).toBe(0);
    const [header, ...rows] = list.stdout.trim().split('\n');
    expect(header).toMatch(/^TICKET\s+STATUS\s+DATABASE\s+RISK\s+ROWS\s+AGE\s+ORIGIN\s+WHAT$/);
    expect(rows.every((r) => r.includes('PENDING_APPROVAL'))).toBe(true);
    const row = rows.find((r) => r.startsWith(pending)) ?? '';
    expect(row).toContain(`${scratch.name}@127.0.0.1:5432`);
    expect(row).toMatch(/\bLOW\b.*\b\d+s\b.*person \(newcomer\)/);
    expect(list.stdout).not.toContain('EXECUTED');
    const all = await cli(['approvals', 'list', '--all']);
    expect(all.stdout).toContain('EXECUTED');
    expect(all.stdout).toContain(pending);
  });

  it('the same statement twice on one database makes one pending ticket (CLI and MCP); a changed impact replaces it', async () => {
    const sql = 'DELETE FROM order_items WHERE id BETWEEN 20 AND 24';
    const first = ticketOf((await cli(['sql', '--db', scratch.url, '--no-input', '--', sql])).stdout);
    const second = ticketOf((await cli(['sql', '--db', scratch.url, '--no-input', '--', sql])).stdout);
    expect(second).toBe(first);
    // Another database: its own ticket.
    const elsewhere = ticketOf((await cli(['sql', '--db', other.url, '--no-input', '--', sql])).stdout);
    expect(elsewhere).not.toBe(first);
    // The rows it would delete changed: a new ticket with the impact of now; the old one is rejected as replaced.
    await execSql(scratch.url, 'DELETE FROM order_items WHERE id = 24');
    const third = ticketOf((await cli(['sql', '--db', scratch.url, '--no-input', '--', sql])).stdout);
    expect(third).not.toBe(first);
    const old = JSON.parse((await cli(['approvals', 'show', first, '--json'])).stdout) as { status: string };
    expect(old.status).toBe('REJECTED');
    const pendingRows = (await cli(['approvals', 'list'])).stdout.split('\n').filter((l) => l.includes(sql));
    expect(pendingRows.filter((l) => l.includes(scratch.name))).toHaveLength(1);

    const mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
    try {
      const propose = async () =>
        (
          (await mcp.call('propose_write', { sql: 'DELETE FROM order_items WHERE id = 30', reason: 'x' }))
            .structuredContent as { ticket: { id: string } }
        ).ticket.id;
      expect(await propose()).toBe(await propose());
    } finally {
      await mcp.close();
    }
  });

  it('two pg-agent processes send the same write: one pending ticket file in .pgagent/approvals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-newcomer-twice-'));
    try {
      const sql = 'DELETE FROM order_items WHERE id BETWEEN 40 AND 42';
      const run = () =>
        pgAgentProcess(['sql', '--db', scratch.url, '--no-input', '--workspace', dir, '--', sql], {
          cwd: dir,
          env: { USER: 'newcomer', HOME: dir, XDG_CONFIG_HOME: join(dir, '.config') },
        });
      const first = await run();
      const second = await run();
      expect([first.code, second.code], `${first.stderr}${second.stderr}`).toEqual([3, 3]);
      expect(ticketOf(second.stdout)).toBe(ticketOf(first.stdout));
      const approvals = join(dir, '.pgagent', 'approvals');
      const files = readdirSync(approvals).filter((name) => name.endsWith('.json'));
      const tickets = files.map(
        (name) =>
          JSON.parse(readFileSync(join(approvals, name), 'utf8')) as { id: string; sql: string; status: string },
      );
      expect(tickets.map((t) => [t.id, t.status])).toEqual([[ticketOf(first.stdout), 'PENDING_APPROVAL']]);
      expect(await count('SELECT count(*) FROM order_items WHERE id BETWEEN 40 AND 42')).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an agent's proposal: approve says the agent runs it; exec refuses it, --force only for its requester", async () => {
    const mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
    let id: string;
    try {
      const proposed = await mcp.call('propose_write', {
        sql: 'DELETE FROM order_items WHERE id = 10',
        reason: 'test',
      });
      id = (proposed.structuredContent as { ticket: { id: string } }).ticket.id;
    } finally {
      await mcp.close();
    }
    const approved = await cli(['approvals', 'approve', id]);
    expect(approved.stdout).toContain('The agent runs it with execute_approved');
    expect(approved.stdout).not.toContain('pg-agent exec');
    const refused = await cli(['exec', '--ticket', id]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('is run by the agent that asked for it (agent via MCP');
    expect(refused.stderr).toContain('The agent runs it with execute_approved.');
    const forced = await cli(['exec', '--ticket', id, '--force']);
    expect(forced.code).toBe(4);
    expect(forced.stderr).toContain('--force is only for its requester');
    expect(await count('SELECT count(*) FROM order_items WHERE id = 10')).toBe(1);
  });

  describe('a guard client', () => {
    let guard: GuardProcess;
    beforeAll(async () => {
      guard = await startGuardProcess(scratch.url, {
        workspace: mkdtempSync(join(tmpdir(), 'pgagent-newcomer-guard-')),
      });
    }, 60_000);
    afterAll(async () => {
      await guard?.stop();
    });

    it('approve says to retry from the client; exec refuses it; the client retry runs it', async () => {
      const client = new pg.Client({ connectionString: guard.url });
      await client.connect();
      try {
        const error = await client.query('DELETE FROM order_items WHERE id = 11').catch((e: unknown) => e);
        expect((error as { code?: string }).code).toBe('PA001');
        const id = /tkt_\w+/.exec((error as Error).message)?.[0] ?? '';
        const approved = await guard.pgAgent(['approvals', 'approve', id]);
        expect(approved.stdout).toContain(
          'retry the statement from the client (or wait: it runs when the client sends it again)',
        );
        const refused = await guard.pgAgent(['exec', '--ticket', id]);
        expect(refused.code).toBe(4);
        expect(refused.stderr).toContain('is run by the guard client that asked for it (guard user alice)');
        expect(await count('SELECT count(*) FROM order_items WHERE id = 11')).toBe(1);
        await client.query('DELETE FROM order_items WHERE id = 11');
        expect(await count('SELECT count(*) FROM order_items WHERE id = 11')).toBe(0);
      } finally {
        await client.end();
      }
    });
  });

  it("a DROP's impact counts the table's rows when that is cheap, instead of the planner's estimate", async () => {
    await execSql(
      scratch.url,
      `CREATE TABLE drop_me (id int PRIMARY KEY); INSERT INTO drop_me SELECT generate_series(1, 100); ANALYZE drop_me;
       INSERT INTO drop_me SELECT generate_series(101, 125);`,
    );
    const impact = await cli(['impact', '--db', scratch.url, '--', 'DROP TABLE drop_me']);
    expect(impact.stdout).toContain('blocks reads and writes of public.drop_me — 125 rows (counted)');
    const json = JSON.parse(
      (await cli(['impact', '--db', scratch.url, '--json', '--', 'TRUNCATE drop_me'])).stdout,
    ) as {
      locks: { table: string; rows: number; rowsExact?: boolean }[];
    };
    expect(json.locks.find((l) => l.table === 'public.drop_me')).toMatchObject({ rows: 125, rowsExact: true });
    // Other DDL keeps the planner's number, as before.
    const other = await cli(['impact', '--db', scratch.url, '--json', '--', 'ALTER TABLE drop_me ADD COLUMN n int']);
    expect((JSON.parse(other.stdout) as { locks: { rowsExact?: boolean }[] }).locks[0]?.rowsExact).toBeUndefined();
  });

  it('argument errors: our own message, the closest match, the short usage, exit 2', async () => {
    const command = await cli(['sqll', 'SELECT 1']);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe(
      'pg-agent: unknown command "sqll" (did you mean "sql"?).\nRun "pg-agent --help" for the list of commands.\n',
    );
    const flag = await cli(['sql', '--dbb', scratch.url, '--', 'SELECT 1']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('pg-agent sql: unknown flag --dbb (did you mean --db?).');
    expect(flag.stderr).toContain('Usage: pg-agent sql [flags] [--] <SQL | ->');
    expect(flag.stderr).not.toContain('To specify a positional argument');
    expect(flag.stderr).not.toContain('Common flags:');
    expect(flag.stderr.split('\n').length).toBeLessThanOrEqual(4);
    const value = await cli(['exec', '--ticket']);
    expect(value.code).toBe(2);
    expect(value.stderr).toContain('--ticket needs a value.');
    const unknown = await cli(['exec', '--ticket', 'tkt_aaaaaaaaaaaaaaaaaaaa']);
    expect(unknown.code).toBe(2);
    const help = await cli(['--help']);
    expect(help.stdout).toMatch(/3 {2}held for approval[\s\S]*4 {2}refused/);
  });

  it(
    'undo shows a summary and the script file, its ticket measured without lint against its own restore',
    { timeout: 240_000 },
    async () => {
      const fingerprint = await queryValue(scratch.url, SHOP_DATA_FINGERPRINT);
      // Every row of a table: the undo puts all of them back (and deletes the audit rows the trigger wrote).
      const held = await cli(['sql', '--db', scratch.url, '--no-input', '--', 'DELETE FROM orders WHERE id > 150']);
      const id = ticketOf(held.stdout);
      await cli(['approvals', 'approve', id]);
      expect((await cli(['exec', '--ticket', id])).code).toBe(0);
      // Like exec, undo goes to the ticket's database: this run has no --db and no DATABASE_URL.
      const undo = await cli(['undo', id]);
      expect(undo.code, undo.stderr).toBe(3);
      expect(undo.stdout).toMatch(
        /Undo script: \d+ statements \([\d.]+ KB\), in full in .*\.pgagent\/undo\/tkt_\w+\.sql/,
      );
      expect(undo.stdout).toContain('INSERT orders: 1 statement');
      expect(undo.stdout).not.toContain('jsonb_populate_recordset');
      expect(undo.stdout).not.toMatch(/^\s*$\n^\s*$/m);
      const json = await cli(['undo', id, '--json']);
      const impact = (JSON.parse(json.stdout) as { impact: { lint: { rule: string }[]; exactRows: number } }).impact;
      expect(impact.lint.map((l) => l.rule)).not.toContain('write-matches-almost-all-rows');
      expect(impact.exactRows).toBeGreaterThan(0);
      const restore = ticketOf(undo.stdout.slice(undo.stdout.indexOf('Held for approval')));
      await cli(['approvals', 'approve', restore]);
      expect((await cli(['exec', '--ticket', restore])).code).toBe(0);
      expect(await queryValue(scratch.url, SHOP_DATA_FINGERPRINT)).toBe(fingerprint);
    },
  );

  it(
    'the undo of a DROP TABLE says it brings the table back with its rows, and does (never "exact 1 rows", "0 rows changed")',
    { timeout: 240_000 },
    async () => {
      await execSql(
        scratch.url,
        `CREATE TABLE gone (id int PRIMARY KEY, name text);
         INSERT INTO gone SELECT g, 'n' || g FROM generate_series(1, 125) g; ANALYZE gone;`,
      );
      const before = await queryValue(
        scratch.url,
        "SELECT md5(string_agg(id || ':' || name, ',' ORDER BY id)) FROM gone",
      );
      const drop = ticketOf((await cli(['sql', '--db', scratch.url, '--no-input', '--', 'DROP TABLE gone'])).stdout);
      await cli(['approvals', 'approve', drop]);
      const dropped = await cli(['exec', '--ticket', drop]);
      expect(dropped.code, dropped.stderr).toBe(0);
      expect(dropped.stdout).toContain(`Executed ticket ${drop}: public.gone kept whole in the quarantine, in `);
      expect(dropped.stdout).not.toContain('0 rows changed');
      expect(dropped.stdout).not.toContain('Undo script:');
      expect(await queryValue(scratch.url, "SELECT to_regclass('public.gone')")).toBeNull();

      const undo = await cli(['undo', drop]);
      expect(undo.code, undo.stderr).toBe(3);
      // Its impact: the table comes back whole with its 125 rows; the quarantine's own bookkeeping row is not a row
      // of the data ("exact 1 rows" before).
      expect(undo.stdout).toMatch(/^Impact · risk \w+ · estimate n\/a · exact 0 rows · restores 125 rows · /m);
      expect(undo.stdout).toContain(
        '  Restores: public.gone comes back out of the quarantine whole, with its 125 rows (counted)',
      );
      expect(undo.stdout).not.toContain('pgagent_quarantine.entries  (direct)');
      expect(undo.stdout).not.toContain('exact 1 rows');
      const json = JSON.parse((await cli(['undo', drop, '--json'])).stdout) as {
        impact: {
          exactRows: number;
          tables: unknown[];
          restores: { table: string; rows: number; rowsExact: boolean }[];
        };
      };
      expect(json.impact.exactRows).toBe(0);
      expect(json.impact.tables).toEqual([]);
      expect(json.impact.restores).toEqual([
        expect.objectContaining({ table: 'public.gone', rows: 125, rowsExact: true }),
      ]);

      const restore = ticketOf(undo.stdout.slice(undo.stdout.indexOf('Held for approval')));
      await cli(['approvals', 'approve', restore]);
      const ran = await cli(['exec', '--ticket', restore]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toContain(`Executed ticket ${restore}: public.gone is back with its 125 rows, in `);
      expect(ran.stdout).not.toContain('0 rows changed');
      // Moving the table back inserts no row: there is no undo script to show.
      expect(ran.stdout).not.toContain('Undo script:');
      // The database: the table is back with every row as it was.
      expect(await queryValue(scratch.url, 'SELECT count(*) FROM gone')).toBe('125');
      expect(
        await queryValue(scratch.url, "SELECT md5(string_agg(id || ':' || name, ',' ORDER BY id)) FROM gone"),
      ).toBe(before);
      expect((await cli(['quarantine', 'list', '--db', scratch.url])).stdout).not.toContain(drop);
    },
  );
});
