import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import { queryValue } from '../../support/scratchDatabase';
import { postgresAvailable } from '../../support/services';
import { SHOP_FINGERPRINT } from '../../support/shopSchema';
import { IMPACT_JSON_FIELDS } from '../../support/impactReports';
import { useShopWorkspace } from '../../support/shopDatabase';

describe.runIf(postgresAvailable)('pg-agent sql / approvals / exec on PostgreSQL', () => {
  const shop = useShopWorkspace('pgagent-cli-sql');
  const cli = (...argv: string[]) => shop.cli(argv);
  const fingerprint = () => queryValue(shop.scratch.url, SHOP_FINGERPRINT);

  it('runs a read and prints rows in the SPEC §6 JSON shape', async () => {
    const run = await cli(
      'sql',
      '--json',
      '--max-rows',
      '3',
      '--',
      'SELECT id, email, id > 1 AS later FROM customers ORDER BY id',
    );
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      status: 'executed',
      fields: [
        { name: 'id', type: 'integer' },
        { name: 'email', type: 'text' },
        { name: 'later', type: 'boolean' },
      ],
      rows: [
        [1, 'c1@example.com', false],
        [2, 'c2@example.com', true],
        [3, 'c3@example.com', true],
      ],
      rowCount: 3,
      truncated: true,
    });
    expect(out.statements).toEqual([expect.objectContaining({ class: 'read', decision: 'run' })]);
  });

  it('prints a readable table on a terminal-less run, and reads SQL from stdin with -', async () => {
    const run = await runPgAgent(['sql', '--db', shop.scratch.url, '-'], {
      cwd: shop.workspace,
      stdin: 'SELECT name FROM products WHERE id = 2',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Product 2');
    expect(run.stdout).toContain('(1 row;');
  });

  it('holds a write (exit 3 + ticket), a teammate approves it, exec runs it once and writes the undo script', async () => {
    const before = await fingerprint();
    const held = await cli('sql', '--no-input', '--json', '--', 'DELETE FROM orders WHERE id <= 5');
    expect(held.code).toBe(3);
    const out = JSON.parse(held.stdout) as {
      status: string;
      ticket: { id: string; status: string };
      impact: { tables: { name: string; via: string }[] };
    };
    expect(out.status).toBe('held');
    expect(out.ticket.status).toBe('PENDING_APPROVAL');
    expect(out.impact.tables.map((t) => `${t.name}:${t.via}`)).toEqual([
      'orders:direct',
      'order_items:cascade',
      'audit_log:trigger',
    ]);
    expect(await fingerprint()).toBe(before);
    expect(existsSync(join(shop.workspace, '.pgagent', 'impact', `${out.ticket.id}.json`))).toBe(true);

    const early = await cli('exec', '--ticket', out.ticket.id);
    expect(early.code).toBe(4);
    expect(early.stderr).toContain("still waiting for a person's approval");
    expect(await fingerprint()).toBe(before);

    const approve = await runPgAgent(
      ['approvals', 'approve', out.ticket.id, '--comment', 'looks right', '--workspace', shop.workspace],
      { cwd: shop.workspace, env: { USER: 'teammate' } },
    );
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain('approved by teammate: looks right');

    const ran = await cli('exec', '--ticket', out.ticket.id, '--json');
    expect(ran.code).toBe(0);
    const result = JSON.parse(ran.stdout) as { rows: number; undoFile: string };
    expect(result.rows).toBeGreaterThan(5);
    expect(readFileSync(result.undoFile, 'utf8')).toContain('INSERT INTO orders');

    const again = await cli('exec', '--ticket', out.ticket.id);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('already');

    const list = await runPgAgent(['approvals', 'list', '--status', 'EXECUTED', '--workspace', shop.workspace], {
      cwd: shop.workspace,
    });
    expect(list.stdout).toContain(out.ticket.id);
  });

  it('refuses transaction escapes with exit 4, and changes nothing', async () => {
    const before = await fingerprint();
    const run = await cli('sql', '--no-input', '--json', '--', 'COMMIT; DROP TABLE orders');
    expect(run.code).toBe(4);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'refused' });
    expect(await fingerprint()).toBe(before);
  });

  it('exits 2 with the position on a syntax error, an empty input and a NUL byte', async () => {
    const syntax = await cli('sql', '--json', '--', 'SELECT * FORM orders');
    expect(syntax.code).toBe(2);
    expect(JSON.parse(syntax.stdout)).toMatchObject({ status: 'invalid', error: { code: 'SQL_SYNTAX', position: 9 } });
    const human = await cli('sql', '--', 'SELECT * FORM orders');
    expect(human.stderr).toContain('  SELECT * FORM orders\n           ^');
    expect((await cli('sql', '--', '   ')).code).toBe(2);
    expect((await cli('sql', '--', 'SELECT 1\u0000')).code).toBe(2);
  });

  it('shows impact without creating a ticket', async () => {
    const run = await cli('impact', '--json', '--', 'UPDATE products SET price = price * 2');
    expect(run.code).toBe(0);
    const impact = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(impact).toMatchObject({ exactRows: 10, risk: 'HIGH', requiresApproval: true, wouldFail: null });
    expect(Object.keys(impact)).toEqual(expect.arrayContaining(IMPACT_JSON_FIELDS));
  });

  it('classifies without a database', async () => {
    const run = await runPgAgent(
      ['classify', '--json', '--', 'WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d'],
      { cwd: shop.workspace },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ class: 'write', decision: 'approve' });
  });
});

describe.runIf(postgresAvailable)('pg-agent sql on a terminal', () => {
  const shop = useShopWorkspace('pgagent-cli-tty');
  const ask = (sql: string, answers: string[]) => shop.cli(['sql', '--', sql], { answers });
  const count = async (sql: string) => Number(await queryValue(shop.scratch.url, sql));

  it('shows the impact and runs nothing when the answer is no', async () => {
    const run = await ask('DELETE FROM order_items WHERE id = 1', ['n']);
    expect(run.prompts).toEqual(['Approve and run? [y/N] ']);
    expect(run.stdout).toContain('public.order_items  (direct)');
    expect(run.stdout).toContain('Rejected: nothing was run');
    expect(run.code).toBe(4);
    expect(await count('SELECT count(*) AS n FROM order_items WHERE id = 1')).toBe(1);
  });

  it('runs a LOW write on y and writes its undo script', async () => {
    const run = await ask('DELETE FROM order_items WHERE id = 2', ['y']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Executed: 1 rows changed in \d+ ms\. Undo script: .*\.sql/);
    expect(await count('SELECT count(*) AS n FROM order_items WHERE id = 2')).toBe(0);
  });

  it('asks a HIGH write to be confirmed with "yes": y is not enough', async () => {
    const run = await ask('UPDATE products SET price = price', ['y']);
    expect(run.prompts[0]).toContain('Type "yes"');
    expect(run.code).toBe(4);
    const confirmed = await ask('UPDATE products SET price = price', ['yes']);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('Executed: 10 rows changed');
  });
});

// Auto-approval loosens the rules, so it is read from the person's own config only (SPEC §5 3a).
describe.runIf(postgresAvailable)("pg-agent sql with autoApproveMaxRisk in the person's own config", () => {
  const shop = useShopWorkspace('pgagent-cli-policy');

  beforeAll(() => {
    mkdirSync(join(shop.workspace, 'home', 'pg-agent'), { recursive: true });
    writeFileSync(
      join(shop.workspace, 'home', 'pg-agent', 'config.json'),
      JSON.stringify({ approval: { autoApproveMaxRisk: 'LOW' } }),
    );
  });

  it('runs a LOW write without asking, and still holds a MEDIUM one', async () => {
    const sql = (text: string) =>
      shop.cli(['sql', '--no-input', '--', text], {
        env: { USER: 'tester', XDG_CONFIG_HOME: join(shop.workspace, 'home') },
      });
    const low = await sql('DELETE FROM order_items WHERE id = 3');
    expect(low.code, low.stderr).toBe(0);
    expect(low.stdout).toContain('Auto-approved by policy (LOW');
    expect(Number(await queryValue(shop.scratch.url, 'SELECT count(*) FROM order_items WHERE id = 3'))).toBe(0);
    const medium = await sql('DELETE FROM order_items WHERE id BETWEEN 10 AND 40');
    expect(medium.code).toBe(3);
    expect(
      Number(await queryValue(shop.scratch.url, 'SELECT count(*) FROM order_items WHERE id BETWEEN 10 AND 40')),
    ).toBe(31);
  });
});
