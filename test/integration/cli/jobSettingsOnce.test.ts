/**
 * A `pg-agent job` command that shows where a job stands and then drives it (approve, continue) builds two
 * runners from one read of the settings: .pgagent/config.json read, counted, as often as by a command that builds
 * one; its loosening warned about once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type * as FsPromisesModule from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

const counted = vi.hoisted(() => ({ files: [] as string[] }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromisesModule>();
  const readFile = ((path: unknown, ...rest: unknown[]) => {
    counted.files.push(String(path));
    return (real.readFile as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readFile;
  return { ...real, default: { ...real, readFile }, readFile };
});
import { runPgAgent } from '../../support/cliHarness';
import { call, inTactical, newJobAtReview } from '../../support/jobScript';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { useScriptedWorkspace, useShopScratch } from '../../support/shopDatabase';

describe.runIf(postgresAvailable)('a job command reads its settings once', () => {
  let scratch: ScratchDatabase;
  let server: ScriptedModelServer;
  let workspace: string;
  const shop = useShopScratch();
  beforeAll(() => void (scratch = shop.scratch));
  const rig = useScriptedWorkspace('jobonce');
  beforeEach(() => void ({ server, workspace } = rig));

  const job = (argv: string[]) =>
    runPgAgent(['job', '--db', scratch.url, '--workspace', workspace, ...argv], {
      cwd: workspace,
      env: {
        USER: 'tester',
        HOME: workspace,
        XDG_CONFIG_HOME: join(workspace, 'xdg'),
        GEMINI_API_KEY: 'test-key',
        PGAGENT_GEMINI_BASE_URL: server.url,
      },
    });

  it('approve builds two runners from one read of the settings and one checkpoint store, and warns once', async () => {
    const id = await newJobAtReview(server, job);
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    writeFileSync(
      join(workspace, '.pgagent', 'config.json'),
      JSON.stringify({ approval: { autoApproveMaxRisk: 'HIGH' } }),
    );
    server.script([
      inTactical({ functionCall: call('run_sql', { sql: 'DELETE FROM orders WHERE id = 1', todo_id: 't1' }) }),
    ]);
    const config = join(workspace, '.pgagent', 'config.json');
    const reads = async (argv: string[], code: number) => {
      counted.files = [];
      const run = await job(argv);
      expect(run.code, run.stderr).toBe(code);
      return { run, reads: counted.files.filter((f) => f === config).length };
    };
    // `show` builds one runner (a viewer): the settings and the checkpoint store read it, once each.
    expect((await reads(['show', id], 0)).reads).toBe(2);
    // `approve` builds a viewer and the runner that drives the job: the same two reads, plus the connection's
    // profiles and the claim's policy in force, which a claim reads afresh (a prompt may be answered much later).
    const { run: approved, reads: approveReads } = await reads(['approve', id, '--no-input'], 3);
    expect(approveReads).toBe(4);
    const warnings = approved.stderr.match(/approval\.autoApproveMaxRisk "HIGH" is ignored/g) ?? [];
    expect(warnings).toHaveLength(1);
  });
});
