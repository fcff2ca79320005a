import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import { queryValue } from '../../support/scratchDatabase';
import { postgresAvailable } from '../../support/services';
import { SHOP_FINGERPRINT } from '../../support/shopSchema';
import { useScriptedModel, useShopWorkspace } from '../../support/shopDatabase';

interface AskJson {
  status: string;
  sql: string;
  rows: unknown[][];
  rowCount: number;
  thread: string;
  ticket?: { id: string; status: string };
  summary?: string;
  usage: { calls: number };
}

describe.runIf(postgresAvailable)('pg-agent ask on PostgreSQL with a scripted model', () => {
  const shop = useShopWorkspace('pgagent-cli-ask');
  const model = useScriptedModel();
  const ask = (...argv: string[]) => shop.cli(['ask', ...argv], { env: model.env() });

  it('answers a read question with rows (exit 0)', async () => {
    model.server.script([
      { reply: { json: { operation: 'read', tables: ['customers'], confidence: 0.9 } } },
      {
        reply: {
          json: { sql: 'SELECT email FROM customers WHERE id = 2', operation: 'read', explanation: 'one email' },
        },
      },
      { reply: { text: 'Customer 2 is c2@example.com.' } },
    ]);
    const run = await ask('--json', '--', "What is customer 2's email?");
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as AskJson;
    expect(out).toMatchObject({
      status: 'executed',
      rows: [['c2@example.com']],
      rowCount: 1,
      summary: 'Customer 2 is c2@example.com.',
    });
    expect(out.usage.calls).toBe(3);

    model.server.script([
      { reply: { json: { operation: 'read', tables: ['customers'], confidence: 0.9 } } },
      {
        reply: {
          json: { sql: 'SELECT email FROM customers WHERE id = 3', operation: 'read', explanation: 'one email' },
        },
      },
      { reply: { text: 'It is c3@example.com.' } },
    ]);
    const human = await ask('--', "What is customer 3's email?");
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('SELECT email FROM customers WHERE id = 3');
    expect(human.stdout).toContain('c3@example.com');
  });

  it('holds a write (exit 3, ticket + thread), and --resume runs it in a fresh run once approved', async () => {
    model.server.script([
      { reply: { json: { operation: 'write', tables: ['orders'], confidence: 0.9 } } },
      {
        reply: {
          json: {
            sql: 'DELETE FROM orders WHERE id BETWEEN 10 AND 12',
            operation: 'write',
            explanation: 'deletes three orders',
          },
        },
      },
    ]);
    const before = await queryValue(shop.scratch.url, SHOP_FINGERPRINT);
    const held = await ask('--no-input', '--json', '--', 'Delete orders 10 to 12');
    expect(held.code, held.stderr).toBe(3);
    const out = JSON.parse(held.stdout) as AskJson;
    expect(out.status).toBe('held');
    expect(out.ticket?.status).toBe('PENDING_APPROVAL');
    expect(out.thread).toMatch(/^ask_/);
    expect(await queryValue(shop.scratch.url, SHOP_FINGERPRINT)).toBe(before);

    const stillPending = await ask('--no-input', '--resume', out.thread);
    expect(stillPending.code).toBe(3);
    expect(stillPending.stdout).toContain(`pg-agent approvals approve ${out.ticket?.id ?? ''}`);
    expect(stillPending.stdout).toContain(`pg-agent ask --resume ${out.thread}`);

    const approve = await runPgAgent(['approvals', 'approve', out.ticket?.id ?? '', '--workspace', shop.workspace], {
      cwd: shop.workspace,
      env: { USER: 'teammate' },
    });
    expect(approve.code, approve.stderr).toBe(0);

    // The resume happens in a new process: only the files under .pgagent/ carry the run over.
    const cli = join(process.cwd(), 'dist', 'cli.js');
    expect(existsSync(cli), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
    const resumed = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [cli, 'ask', '--db', shop.scratch.url, '--workspace', shop.workspace, '--json', '--resume', out.thread],
        { env: { ...process.env, ...model.env() } },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      status: 'executed',
      thread: out.thread,
      ticket: { status: 'EXECUTED' },
    });
    expect(Number(await queryValue(shop.scratch.url, 'SELECT count(*) FROM orders WHERE id BETWEEN 10 AND 12'))).toBe(
      0,
    );
  });

  it('asks on a terminal and runs the write once the person says y', async () => {
    model.server.script([
      { reply: { json: { operation: 'write', tables: ['products'], confidence: 0.9 } } },
      {
        reply: {
          json: {
            sql: "UPDATE products SET name = 'Renamed' WHERE id = 4",
            operation: 'write',
            explanation: 'renames',
          },
        },
      },
    ]);
    const run = await shop.cli(['ask', '--', 'Rename product 4'], { env: model.env(), answers: ['y'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.prompts).toHaveLength(1);
    expect(await queryValue(shop.scratch.url, 'SELECT name FROM products WHERE id = 4')).toBe('Renamed');
  });

  it('exits 1 with advice when no model is configured', async () => {
    const run = await shop.cli(['ask', '--', 'How many orders?']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('GEMINI_API_KEY');
    expect(run.stderr).toContain('OPENAI_BASE_URL');
  });
});
