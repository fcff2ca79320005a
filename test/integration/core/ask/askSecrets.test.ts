/**
 * A password in SQL the model writes (`pg-agent ask`, scripted model, real CLI and PostgreSQL): the SQL is kept as
 * its SCRAM verifier from the moment the model answers, so no file under .pgagent/ (the run's checkpoints, decoded,
 * and its audit trail, the ticket, the history) holds the password; approved and resumed, the role's password
 * is the one the model wrote.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifies } from '../../../../src/core/sql/secrets/scramVerifier';
import { runPgAgent } from '../../../support/cliHarness';
import { queryValue } from '../../../support/scratchDatabase';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

/** Every file's text, and the base64 payloads inside JSON files decoded (checkpoints keep state as base64). */
function storedTexts(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return storedTexts(path);
    const text = readFileSync(path, 'utf8');
    const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{16,}={0,2})"/g)].map((m) =>
      Buffer.from(m[1] ?? '', 'base64').toString('utf8'),
    );
    return [text, ...decoded];
  });
}

describe.runIf(postgresAvailable)('a password in the SQL the model writes', () => {
  let scratch: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'arch-ask-secrets-'));
  const role = `arch_ask_role_${randomBytes(4).toString('hex')}`;
  const password = `arch-model-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    scratch = await createScratchDatabase('arch_ask_secrets');
    await execSql(scratch.url, `CREATE ROLE ${role} NOLOGIN`);
  });

  afterAll(async () => {
    await scratch?.drop();
    await execSql(scratch.url.replace(/\/[^/]*$/, '/postgres'), `DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    rmSync(workspace, { recursive: true, force: true });
  });

  it('is kept as its verifier everywhere, and sets that password once approved', async () => {
    const server = await startScriptedModelServer();
    try {
      const env = { USER: 'tester', GEMINI_API_KEY: 'test-key', PGAGENT_GEMINI_BASE_URL: server.url };
      const cli = (argv: string[]) => runPgAgent([...argv, '--workspace', workspace], { cwd: workspace, env });
      server.script([
        { reply: { json: { operation: 'write', tables: [], confidence: 0.9 } } },
        {
          reply: {
            json: {
              sql: `ALTER ROLE ${role} PASSWORD '${password}'`,
              operation: 'write',
              explanation: 'sets the agreed password',
            },
          },
        },
      ]);
      const held = await cli([
        'ask',
        '--db',
        scratch.url,
        '--no-input',
        '--json',
        '--',
        `Give ${role} the agreed password`,
      ]);
      expect(held.code, held.stderr).toBe(3);
      const out = JSON.parse(held.stdout) as { sql: string; thread: string; ticket: { id: string } };
      expect(out.sql).toContain('SCRAM-SHA-256$4096:');
      expect(held.stdout + held.stderr).not.toContain(password);
      expect((await cli(['approvals', 'approve', out.ticket.id, '--comment', 'ok'])).code).toBe(0);
      const resumed = await cli(['ask', '--db', scratch.url, '--no-input', '--resume', out.thread]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout + resumed.stderr).not.toContain(password);
    } finally {
      await server.close();
    }
    const stored = String(await queryValue(scratch.url, `SELECT rolpassword FROM pg_authid WHERE rolname = '${role}'`));
    expect(verifies(stored, password)).toBe(true);
    const texts = storedTexts(join(workspace, '.pgagent'));
    expect(texts.some((t) => t.includes('SCRAM-SHA-256$4096:'))).toBe(true);
    expect(texts.filter((t) => t.includes(password))).toEqual([]);
  }, 120_000);
});
