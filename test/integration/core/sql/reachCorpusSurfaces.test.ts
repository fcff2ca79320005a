// Issue 21 "Done when": the same categories through the MCP tools (the official client against the built
// `pg-agent mcp`) and the CLI (`pg-agent sql`, `impact`, `classify`), each asserted on the server: the file a
// shell command or lo_export would write, a victim session, the MCP server's own pooled connections in
// pg_locks, a row dblink would commit. Needs `npm run build` (dist/cli.js) first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../../support/cliHarness';
import type { McpSession } from '../../../support/mcpClient';
import { errorOf, pgAgentMcp, textOf } from '../../../support/mcpClient';
import type { AttackWorld } from '../../../support/reachAttacks';
import {
  attackWorld,
  dblinkBody,
  expectNoLockLeft,
  installAttacks,
  ledgerRows,
  openVictim,
  plpgsql,
  removeServerFiles,
  serverFileExists,
  shellBody,
  triggerFn,
} from '../../../support/reachAttacks';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, postgresAvailable } from '../../../support/services';

interface ReachJson {
  function: string;
  via: string;
  verdict: string;
}

/** A table `name` (id) with rows 1..3 whose BEFORE DELETE trigger `fn` runs the shell. */
function shellOnDelete(w: AttackWorld, name: string, fn: string): string {
  return `CREATE TABLE ${name} (id int PRIMARY KEY); INSERT INTO ${name} VALUES (1), (2), (3);
${triggerFn(fn, shellBody(w, fn))}CREATE TRIGGER ${fn}_trg BEFORE DELETE ON ${name} FOR EACH ROW EXECUTE FUNCTION ${fn}();\n`;
}

function surfaceAttacksSql(w: AttackWorld): string {
  return [
    plpgsql('rt_m_shell', shellBody(w, 'rt_m_shell')),
    `CREATE VIEW rt_m_v_kill AS SELECT pg_terminate_backend(pid) AS killed FROM rt_victims;\n`,
    shellOnDelete(w, 'rt_m_t', 'rt_m_del_shell'),
    shellOnDelete(w, 'rt_m_pw', 'rt_m_pw_shell'),
    shellOnDelete(w, 'rt_m_ex', 'rt_m_ex_shell'),
    `CREATE FUNCTION rt_m_imm_lock(k bigint) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN PERFORM pg_advisory_lock(k); RETURN 1; END $f$;\n`,
    plpgsql('rt_c_shell', shellBody(w, 'rt_c_shell')),
    plpgsql('rt_c_dblink', dblinkBody(w, 'rt_c_dblink')),
    plpgsql('rt_c_cls_shell', shellBody(w, 'rt_c_cls_shell')),
    shellOnDelete(w, 'rt_c_t', 'rt_c_del_shell'),
  ].join('');
}

describe.runIf(postgresAvailable)('reach corpus through MCP and the CLI', () => {
  let scratch: ScratchDatabase;
  let world: AttackWorld;
  let mcp: McpSession;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-reach-surfaces-'));
  const cli = (...argv: string[]) =>
    runPgAgent([...argv.slice(0, 1), '--db', scratch.url, '--workspace', workspace, ...argv.slice(1)], {
      cwd: workspace,
      env: { USER: 'tester' },
    });

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_reach_surfaces');
    world = attackWorld(scratch);
    await installAttacks(world, surfaceAttacksSql(world));
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
  });

  afterAll(async () => {
    await mcp?.close();
    await scratch?.drop();
    if (world) removeServerFiles(world);
    rmSync(workspace, { recursive: true, force: true });
  });

  /**
   * A call on an MCP server of its own, checked for advisory locks while that server (and its pool) still
   * runs; closing it afterwards ends its connections, so no lock outlives the case to mislead the next.
   */
  const ownMcp = async (call: (own: McpSession) => ReturnType<McpSession['call']>, key: number) => {
    const own = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
    try {
      const result = await call(own);
      await expectNoLockLeft(world.url, key);
      return result;
    } finally {
      await own.close();
    }
  };

  /** run_read must not return rows for it: a tool error, or a held result. */
  const expectNoRows = (result: Awaited<ReturnType<McpSession['call']>>) => {
    const structured = result.structuredContent as { status?: string; rows?: unknown[] } | undefined;
    expect(
      result.isError === true || structured?.status === 'held',
      `run_read answered: ${textOf(result).slice(0, 300)}`,
    ).toBe(true);
    expect(structured?.rows ?? []).toEqual([]);
  };

  it('MCP run_read of a function running COPY … TO PROGRAM: no rows, no file on the server', async () => {
    const result = await mcp.call('run_read', { sql: 'SELECT rt_m_shell()' });
    expect(serverFileExists(world, 'rt_m_shell'), 'run_read ran the shell command').toBe(false);
    expectNoRows(result);
  });

  it("MCP run_read of a session advisory lock: the MCP server's pooled connection holds none afterwards", async () => {
    const key = world.key(1);
    const result = await ownMcp((own) => own.call('run_read', { sql: `SELECT rt_lock(${key})` }), key);
    expectNoRows(result);
  });

  it('MCP run_read of a view calling pg_terminate_backend: the victim is alive', async () => {
    const victim = await openVictim(world.url);
    try {
      const result = await mcp.call('run_read', { sql: 'SELECT * FROM rt_m_v_kill' });
      expect(await victim.alive(), 'run_read terminated another session').toBe(true);
      expectNoRows(result);
    } finally {
      await victim.close();
    }
  });

  it('MCP impact of a delete whose trigger runs the shell: previewed false, the trigger function in reach, no file', async () => {
    const result = await mcp.call('impact', { sql: 'DELETE FROM rt_m_t WHERE id = 1' });
    expect(serverFileExists(world, 'rt_m_del_shell'), 'the preview ran the shell command').toBe(false);
    expect(result.isError, textOf(result)).toBeFalsy();
    const impact = result.structuredContent as { previewed: boolean; reach?: ReachJson[]; warnings: string[] };
    expect(impact.previewed).toBe(false);
    expect(impact.warnings.join(' ')).toMatch(/Not previewed.*rt_m_del_shell/);
    expect(
      impact.reach?.some((r) => /rt_m_del_shell/.test(r.function) && r.verdict === 'side-effect'),
      JSON.stringify(impact.reach),
    ).toBe(true);
  });

  it('MCP propose_write of the same kind of delete: a pending ticket, nothing ran', async () => {
    const result = await mcp.call('propose_write', {
      sql: 'DELETE FROM rt_m_pw WHERE id = 1',
      reason: 'remove a test row',
    });
    expect(serverFileExists(world, 'rt_m_pw_shell'), 'proposing the write ran the shell command').toBe(false);
    expect(result.isError, textOf(result)).toBeFalsy();
    const { impact, ticket } = result.structuredContent as {
      impact: { previewed: boolean };
      ticket: { status: string };
    };
    expect(ticket.status).toBe('PENDING_APPROVAL');
    expect(impact.previewed).toBe(false);
  });

  it('MCP explain of a lying IMMUTABLE function taking a lock: SQL_REFUSED, no lock held by the server', async () => {
    const key = world.key(2);
    const result = await ownMcp((own) => own.call('explain', { sql: `SELECT rt_m_imm_lock(${key})` }), key);
    expect(errorOf(result).code).toBe('SQL_REFUSED');
  });

  it('MCP explain of a delete whose trigger runs the shell: SQL_REFUSED, no file', async () => {
    const result = await mcp.call('explain', { sql: 'DELETE FROM rt_m_ex WHERE id = 1' });
    expect(serverFileExists(world, 'rt_m_ex_shell')).toBe(false);
    expect(result.isError ? errorOf(result).code : 'planned').toBe('SQL_REFUSED');
  });

  it('pg-agent sql of a function running the shell: exit 3, held with a ticket, no file', async () => {
    const run = await cli('sql', '--json', '--no-input', '--', 'SELECT rt_c_shell()');
    expect(serverFileExists(world, 'rt_c_shell'), 'pg-agent sql ran the shell command').toBe(false);
    const out = JSON.parse(run.stdout || '{}') as { status?: string; ticket?: { id: string }; rows?: unknown[] };
    expect(run.code, run.stdout + run.stderr).toBe(3);
    expect(out.status).toBe('held');
    expect(out.ticket?.id).toMatch(/^tkt_/);
  });

  it('pg-agent sql of a function committing through dblink: exit 3, the row is not in the table', async () => {
    const run = await cli('sql', '--json', '--no-input', '--', 'SELECT rt_c_dblink()');
    expect(await ledgerRows(world.url, 'rt_c_dblink'), 'dblink committed a row through a read').toBe(0);
    expect(run.code, run.stdout + run.stderr).toBe(3);
    expect((JSON.parse(run.stdout || '{}') as { status?: string }).status).toBe('held');
  });

  it('pg-agent sql of pg_hba_file_rules: exit 3, held, no rows', async () => {
    const run = await cli('sql', '--json', '--no-input', '--', 'SELECT * FROM pg_hba_file_rules');
    const out = JSON.parse(run.stdout || '{}') as { status?: string; rows?: unknown[] };
    expect(run.code, run.stdout.slice(0, 300)).toBe(3);
    expect(out.status).toBe('held');
    expect(out.rows ?? []).toEqual([]);
  });

  it('pg-agent impact --json of a delete whose trigger runs the shell: "previewed": false, reach names it, no file', async () => {
    const run = await cli('impact', '--json', '--', 'DELETE FROM rt_c_t WHERE id = 1');
    expect(serverFileExists(world, 'rt_c_del_shell'), 'pg-agent impact ran the shell command').toBe(false);
    const out = JSON.parse(run.stdout || '{}') as { previewed?: boolean; reach?: ReachJson[] };
    expect(out.previewed).toBe(false);
    expect(
      out.reach?.some((r) => /rt_c_del_shell/.test(r.function) && r.verdict === 'side-effect'),
      JSON.stringify(out.reach),
    ).toBe(true);
  });

  it('pg-agent classify --json against the database: the reach names the function; nothing ran', async () => {
    const run = await cli('classify', '--json', '--', 'SELECT rt_c_cls_shell()');
    expect(serverFileExists(world, 'rt_c_cls_shell')).toBe(false);
    const out = JSON.parse(run.stdout || '{}') as { statements?: { class: string; reach?: ReachJson[] }[] };
    const [statement] = out.statements ?? [];
    expect(statement?.class).not.toBe('read');
    expect(
      statement?.reach?.some((r) => /rt_c_cls_shell/.test(r.function) && r.verdict === 'side-effect'),
      JSON.stringify(statement),
    ).toBe(true);
  });
});
