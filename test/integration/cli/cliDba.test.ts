// pg-agent health / top / indexes advise (issue 26) through the CLI on the DBA cluster: JSON shapes, exit codes,
// setup steps when pg_stat_statements is missing, index advice held as tickets on disk, bad input as exit 2.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../../src/core/dba/healthTypes';
import type { TopReport } from '../../../src/core/dba/topQueries';
import type { AdviceReport } from '../../../src/core/dba/indexAdvice/adviceTypes';
import { runPgAgent } from '../../support/cliHarness';
import { createScratchDatabase, postgresAvailable } from '../../support/services';
import type { ScratchDatabase } from '../../support/scratchDatabase';
import { execSql, queryValue } from '../../support/scratchDatabase';
import { createDbaScratch, dbaClusterAvailable } from '../../support/dbaCluster';
import { loadDbaWorkload } from '../../support/dbaWorkload';

describe.runIf(dbaClusterAvailable)('pg-agent health, top and indexes advise', () => {
  let scratch: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-cli-dba-'));
  const cli = (...argv: string[]) =>
    runPgAgent([...argv.slice(0, 1), '--db', scratch.url, '--workspace', workspace, ...argv.slice(1)], {
      cwd: workspace,
      env: { USER: 'tester' },
    });

  beforeAll(async () => {
    scratch = await createDbaScratch();
    await loadDbaWorkload(scratch.url);
  });
  afterAll(async () => {
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('health --json gives every check with its status, thresholds and findings', async () => {
    const run = await cli('health', '--json', '--check', 'sequences_near_max,missing_fk_indexes');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as HealthReport;
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ['sequences_near_max', 'findings'],
      ['missing_fk_indexes', 'findings'],
    ]);
    expect(report.checks[0]?.thresholds).toEqual({ sequenceWarnRatio: 0.75, sequenceCriticalRatio: 0.9 });
    expect(report.summary).toMatchObject({ findings: 2, critical: 1 });
    const text = await cli('health', '--check', 'missing_fk_indexes');
    expect(text.stdout).toContain('fix (held for approval): CREATE INDEX CONCURRENTLY ON public.orders (customer_id)');
  });

  it('health refuses an unknown check with exit 2 and the list of checks', async () => {
    const run = await cli('health', '--check', 'vibes');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Unknown check: vibes[\s\S]*Known checks: invalid_indexes/);
  });

  it('top without the extension: the reason and the setup step, exit 1; with it, the recorded statements', async () => {
    const missing = await cli('top');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(
      /loaded but the extension is not created[\s\S]*1\. CREATE EXTENSION pg_stat_statements;/,
    );
    await execSql(
      scratch.url,
      'CREATE EXTENSION pg_stat_statements; SELECT id FROM orders WHERE customer_id = 42; SELECT id FROM orders WHERE customer_id = 43;',
    );
    const run = await cli('top', '--json', '--by', 'calls', '--limit', '50');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as TopReport;
    if (!report.available) throw new Error('expected pg_stat_statements to be available');
    const mine = report.queries.find((q) => q.query === 'SELECT id FROM orders WHERE customer_id = $1');
    expect(mine?.calls).toBeGreaterThanOrEqual(2);
    expect(report.queries.some((q) => /^(BEGIN|ROLLBACK|SET )/i.test(q.query))).toBe(false);
    expect((await cli('top', '--by', 'fastest')).code).toBe(2);
  });

  it("top as a non-superuser: its own statements in full, other roles' texts hidden and said so", async () => {
    const role = `dba_top_${scratch.name.slice(-6)}`;
    await execSql(scratch.url, `CREATE ROLE ${role} LOGIN; GRANT CONNECT ON DATABASE ${scratch.name} TO ${role}`);
    const url = new URL(scratch.url);
    url.username = role;
    try {
      await execSql(url.toString(), 'SELECT 41 + 1');
      const run = await runPgAgent(
        ['top', '--db', url.toString(), '--workspace', workspace, '--json', '--by', 'calls', '--limit', '500'],
        { cwd: workspace, env: { USER: 'tester' } },
      );
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as TopReport;
      if (!report.available) throw new Error(`expected pg_stat_statements to be readable: ${report.reason}`);
      expect(report.queries.map((q) => q.query)).toContain('SELECT $1 + $2');
      expect(report.queries.some((q) => q.query === '<insufficient privilege>')).toBe(true);
      expect(report.note).toMatch(/other roles' statements, whose text PostgreSQL hides/);
    } finally {
      await execSql(scratch.url, `REVOKE CONNECT ON DATABASE ${scratch.name} FROM ${role}; DROP ROLE ${role}`);
    }
  });

  it('indexes advise --query holds the recommended index as a ticket on disk (exit 3), builds nothing', async () => {
    await execSql(scratch.url, 'CREATE EXTENSION hypopg');
    const run = await cli(
      'indexes',
      'advise',
      '--json',
      '--query',
      'SELECT id, total FROM orders WHERE customer_id = 17;',
    );
    expect(run.code).toBe(3);
    const report = JSON.parse(run.stdout) as AdviceReport;
    const ticket = report.recommendations[0]?.ticket;
    expect(ticket?.status).toBe('PENDING_APPROVAL');
    expect(existsSync(join(workspace, '.pgagent', 'approvals', `${ticket?.id}.json`))).toBe(true);
    expect(
      await queryValue(scratch.url, "SELECT count(*)::int FROM pg_indexes WHERE indexdef LIKE '%(customer_id%'"),
    ).toBe(0);
    const listed = await cli(
      'indexes',
      'advise',
      '--no-hold',
      '--query',
      'SELECT id, total FROM orders WHERE customer_id = 17',
    );
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/1\. CREATE INDEX CONCURRENTLY ON public\.orders \(customer_id/);
    expect(listed.stdout).toMatch(/measured: saves \d+% of the planner cost/);
  });

  it('indexes advise --top N advises on the heaviest recorded statements', async () => {
    const run = await cli('indexes', 'advise', '--json', '--no-hold', '--top', '200');
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const report = JSON.parse(run.stdout) as AdviceReport;
    expect(report.queries.every((q) => q.source === 'pg_stat_statements')).toBe(true);
    expect(
      report.recommendations.some((r) => r.columns[0] === 'customer_id'),
      JSON.stringify(report, null, 1),
    ).toBe(true);
  });

  it('bad input: no query, both, a write, an unknown subcommand', async () => {
    expect((await cli('indexes', 'advise')).code).toBe(2);
    expect((await cli('indexes', 'advise', '--query', 'SELECT 1', '--top', '3')).code).toBe(2);
    expect((await cli('indexes', 'tune')).code).toBe(2);
    expect((await cli('indexes', 'advise', '--min-gain', 'lots', '--query', 'SELECT 1')).code).toBe(2);
    const write = await cli('indexes', 'advise', '--query', 'DELETE FROM orders');
    expect(write.code).toBe(4);
    expect(write.stderr).toMatch(/not a SELECT \(DeleteStmt\)/);
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders')).toBe(20000);
  });
});

describe.runIf(postgresAvailable)('pg-agent top on a server that does not preload pg_stat_statements', () => {
  it('says the extension is created but not loaded, and the step that fixes it (exit 1)', async () => {
    const scratch = await createScratchDatabase('pgagent_top_unloaded');
    const workspace = mkdtempSync(join(tmpdir(), 'pgagent-cli-top-'));
    try {
      await execSql(scratch.url, 'CREATE EXTENSION pg_stat_statements');
      const run = await runPgAgent(['top', '--db', scratch.url, '--workspace', workspace], {
        cwd: workspace,
        env: { USER: 'tester' },
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        /not loaded: it must be in shared_preload_libraries[\s\S]*1\. Add pg_stat_statements to shared_preload_libraries/,
      );
      const advise = await runPgAgent(
        ['indexes', 'advise', '--top', '5', '--db', scratch.url, '--workspace', workspace],
        { cwd: workspace, env: { USER: 'tester' } },
      );
      expect(advise.code).toBe(1);
      expect(advise.stderr).toMatch(/shared_preload_libraries/);
    } finally {
      await scratch.drop();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
