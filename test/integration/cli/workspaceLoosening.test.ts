// Workspace files only tighten (SPEC §5 3a, issue 22 item 2), with the built `pg-agent` as a separate
// process acting as an agent with a shell would: a cloned repository's .pgagent/config.json asking for
// auto-approval or raised thresholds is ignored (exit 3, the rows still there, a warning naming file and
// setting); the same from the person's own $XDG_CONFIG_HOME/pg-agent/config.json is honoured; a workspace
// that tightens is honoured.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pgAgentProcess } from '../../support/cliProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

describe.runIf(postgresAvailable)('a workspace file that tries to loosen the rules', () => {
  let scratch: ScratchDatabase;
  let root: string;
  let workspace: string;
  let home: string;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, 'CREATE TABLE items (id int PRIMARY KEY, tag text NOT NULL)');
  });
  afterAll(async () => {
    await scratch?.drop();
  });
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgagent-loosen-'));
    workspace = join(root, 'cloned-repo');
    home = join(root, 'home');
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    await execSql(scratch.url, 'TRUNCATE items; INSERT INTO items SELECT g, $$t$$ FROM generate_series(1, 40) g');
    return () => rmSync(root, { recursive: true, force: true });
  });

  const workspaceConfig = (config: unknown) =>
    writeFileSync(join(workspace, '.pgagent', 'config.json'), JSON.stringify(config));
  const ownConfig = (config: unknown) => {
    mkdirSync(join(home, 'config', 'pg-agent'), { recursive: true });
    writeFileSync(join(home, 'config', 'pg-agent', 'config.json'), JSON.stringify(config));
  };
  const pgAgent = (...argv: string[]) =>
    pgAgentProcess(argv, {
      cwd: workspace,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), USER: 'agent', DATABASE_URL: scratch.url },
    });
  const count = async () => Number(await queryValue(scratch.url, 'SELECT count(*) FROM items'));
  const configFile = () => join(workspace, '.pgagent', 'config.json');

  it('holds a DELETE the workspace asked to auto-approve (exit 3), keeps the rows and names the file and setting', async () => {
    workspaceConfig({ approval: { autoApproveMaxRisk: 'HIGH' } });
    const run = await pgAgent('sql', '--no-input', '--', 'DELETE FROM items WHERE id = 1');
    expect(run.code, run.stderr).toBe(3);
    expect(await count()).toBe(40);
    expect(run.stderr).toContain(configFile());
    expect(run.stderr).toMatch(/approval\.autoApproveMaxRisk "HIGH" is ignored/);
    // In JSON too, among the impact's warnings.
    const json = await pgAgent('sql', '--no-input', '--json', '--', 'DELETE FROM items WHERE id = 2');
    expect(json.code, json.stderr).toBe(3);
    const out = JSON.parse(json.stdout) as { status: string; impact: { warnings: string[] } };
    expect(out.status).toBe('held');
    expect(out.impact.warnings.some((w) => w.includes(configFile()) && w.includes('approval.autoApproveMaxRisk'))).toBe(
      true,
    );
    expect(await count()).toBe(40);
  });

  it('runs the same DELETE when the person set autoApproveMaxRisk in their own config', async () => {
    ownConfig({ approval: { autoApproveMaxRisk: 'HIGH' } });
    const run = await pgAgent('sql', '--no-input', '--', 'DELETE FROM items WHERE id = 1');
    expect(run.code, run.stderr).toBe(0);
    expect(await count()).toBe(39);
    expect(run.stderr).not.toContain('ignored');
  });

  it("ignores thresholds the workspace raised: a 20-row DELETE stays MEDIUM, above the person's LOW", async () => {
    ownConfig({ approval: { autoApproveMaxRisk: 'LOW' } });
    workspaceConfig({ safety: { riskThresholds: { low: 100000 } } });
    const run = await pgAgent('sql', '--no-input', '--json', '--', 'DELETE FROM items WHERE id <= 20');
    expect(run.code, run.stderr).toBe(3);
    expect((JSON.parse(run.stdout) as { impact: { risk: string } }).impact.risk).toBe('MEDIUM');
    expect(run.stderr).toContain(configFile());
    expect(run.stderr).toMatch(/safety\.riskThresholds\.low 100000 is ignored/);
    expect(await count()).toBe(40);
    // The person's own LOW still lets a one-row DELETE through: the workspace took nothing else away.
    const small = await pgAgent('sql', '--no-input', '--', 'DELETE FROM items WHERE id = 40');
    expect(small.code, small.stderr).toBe(0);
    expect(await count()).toBe(39);
  });

  it("honours a workspace that tightens: autoApproveMaxRisk none over the person's HIGH holds the write", async () => {
    ownConfig({ approval: { autoApproveMaxRisk: 'HIGH' } });
    workspaceConfig({ approval: { autoApproveMaxRisk: 'none' } });
    const run = await pgAgent('sql', '--no-input', '--', 'DELETE FROM items WHERE id = 1');
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).not.toContain('ignored');
    expect(await count()).toBe(40);
  });

  it('honours a workspace that requires a signature: held, and an unsigned approval cannot run it (exit 4)', async () => {
    ownConfig({ approval: { autoApproveMaxRisk: 'HIGH' } });
    workspaceConfig({ approval: { policy: { requireSignature: true } } });
    const held = await pgAgent('sql', '--no-input', '--json', '--', 'DELETE FROM items WHERE id = 1');
    expect(held.code, held.stderr).toBe(3);
    const id = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
    const approved = await pgAgent('approvals', 'approve', id);
    expect(approved.code, approved.stderr).toBe(0);
    const exec = await pgAgent('exec', '--ticket', id);
    expect(exec.code, exec.stderr).toBe(4);
    expect(exec.stderr).toMatch(/requireSignature/);
    expect(exec.stderr).toContain(configFile());
    expect(await count()).toBe(40);
  });
});
