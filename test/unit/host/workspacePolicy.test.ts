// Workspace files only tighten (SPEC §5 3a, issue 22): every setting is the stricter of the person's own
// configuration (VS Code user settings, $XDG_CONFIG_HOME/pg-agent/config.json) and the workspace's
// .pgagent/config.json, each loosening the workspace asks for ignored with a warning naming file and setting;
// the CLI and the extension compute the same policy for the same files.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommonFlags } from '../../../src/cli/args';
import { readJobSettings } from '../../../src/cli/jobSetup';
import { cliSafetyInForce as cliSafety } from '../../../src/cli/sqlInput';
import { strictestPolicy } from '../../../src/core/approvals/strictestPolicy';
import { DEFAULT_PLANNING } from '../../../src/core/jobs/planningSettings';
import { DEFAULT_SAFETY } from '../../../src/core/sql/safetySettings';
import type { WorkspaceConfig } from '../../../src/core/config/workspace';
import { readConfigFile, readWorkspaceConfig, workspacePaths } from '../../../src/core/config/workspace';
import { resolvePlanning, resolveSafety } from '../../../src/core/settings/workspacePolicy';
import type { SettingsGetter } from '../../../src/host/settings/policyFromSettings';
import { userPlanning, userSafety, workspaceSettingsConfig } from '../../../src/host/settings/policyFromSettings';

const FILES = { workspace: '/ws/.pgagent/config.json', own: '~/.config/pg-agent/config.json' };

/** What the extension computes (src/host/settings/settings.ts) with these VS Code user settings. */
function extensionPolicy(config: WorkspaceConfig, settings: Record<string, unknown>) {
  const get: SettingsGetter = <T>(key: string) => settings[key] as T | undefined;
  return {
    safety: resolveSafety(config, userSafety(get, DEFAULT_SAFETY), FILES),
    planning: resolvePlanning(config, userPlanning(get, DEFAULT_PLANNING), FILES),
  };
}

const NO_OWN: WorkspaceConfig = { connections: [] };

describe("the policy in force: the person's own settings, tightened by the workspace", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pgagent-policy-'));
    mkdirSync(join(dir, '.pgagent'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (config: unknown) => writeFileSync(join(dir, '.pgagent', 'config.json'), JSON.stringify(config));

  it('ignores every loosening a workspace file asks for, naming the file and the setting', async () => {
    write({
      approval: { autoApproveMaxRisk: 'HIGH' },
      safety: { riskThresholds: { low: 100000, high: 500, bigTableRows: 1e12 } },
      planning: { interactive: false, maxReviewCycles: 9 },
    });
    const config = await readWorkspaceConfig(workspacePaths(dir));
    const cli = cliSafety({ workspace: dir } as Parameters<typeof cliSafety>[0], config, NO_OWN, {});
    expect(cli.settings.policy.autoApproveMaxRisk).toBe('none');
    // Lower is stricter: the workspace's 500 for `high` tightens, its 100000 for `low` does not count.
    expect(cli.settings.policy.thresholds).toEqual({ ...DEFAULT_SAFETY.policy.thresholds, high: 500 });
    expect(cli.warnings.map((w) => w.setting).sort()).toEqual([
      'approval.autoApproveMaxRisk',
      'safety.riskThresholds.bigTableRows',
      'safety.riskThresholds.low',
    ]);
    for (const w of cli.warnings) {
      expect(w.file).toBe(join(dir, '.pgagent', 'config.json'));
      expect(w.message).toContain(w.file);
      expect(w.message).toContain(w.setting);
    }
    const planning = resolvePlanning(config, DEFAULT_PLANNING, FILES);
    expect(planning.settings).toEqual({ interactive: true, maxReviewCycles: 9 });
    expect(planning.warnings.map((w) => w.setting)).toEqual(['planning.interactive']);
  });

  it("honours the same loosening from the person's own config, and the workspace still tightens it", async () => {
    const own: WorkspaceConfig = {
      connections: [],
      approval: { autoApproveMaxRisk: 'HIGH' },
      safety: { riskThresholds: { low: 50 } },
      planning: { interactive: false },
    };
    const alone = cliSafety({ workspace: dir } as Parameters<typeof cliSafety>[0], { connections: [] }, own, {});
    expect(alone.settings.policy.autoApproveMaxRisk).toBe('HIGH');
    expect(alone.settings.policy.thresholds.low).toBe(50);
    expect(alone.warnings).toEqual([]);
    write({
      approval: { autoApproveMaxRisk: 'LOW' },
      safety: { criticalTables: ['public.payments'], riskThresholds: { low: 5 } },
    });
    const tightened = cliSafety(
      { workspace: dir } as Parameters<typeof cliSafety>[0],
      await readWorkspaceConfig(workspacePaths(dir)),
      own,
      {},
    );
    expect(tightened.settings.policy).toEqual({
      autoApproveMaxRisk: 'LOW',
      criticalTables: ['public.payments'],
      thresholds: { ...DEFAULT_SAFETY.policy.thresholds, low: 5 },
    });
    expect(tightened.warnings).toEqual([]);
  });

  it("lets the workspace shorten approved DDL's lock tries, never lengthen them (issue 25)", async () => {
    const own: WorkspaceConfig = { connections: [], safety: { ddlLockTimeoutMs: 200, ddlLockAttempts: 5 } };
    write({ safety: { ddlLockTimeoutMs: 50, ddlLockAttempts: 30 } });
    const resolved = cliSafety(
      { workspace: dir } as Parameters<typeof cliSafety>[0],
      await readWorkspaceConfig(workspacePaths(dir)),
      own,
      {},
    );
    expect([resolved.settings.ddlLockTimeoutMs, resolved.settings.ddlLockAttempts]).toEqual([50, 5]);
    expect(resolved.warnings.map((w) => w.setting)).toEqual(['safety.ddlLockAttempts']);
    const get: SettingsGetter = <T>(key: string) => ({ 'query.ddlLockTimeoutMs': 300 })[key] as T | undefined;
    expect(userSafety(get, DEFAULT_SAFETY)).toMatchObject({
      ddlLockTimeoutMs: 300,
      ddlLockAttempts: DEFAULT_SAFETY.ddlLockAttempts,
    });
    expect(workspaceSettingsConfig(get).safety).toEqual({ ddlLockTimeoutMs: 300 });
  });

  it("reads the recovery window from the person's own config only (issue 25)", async () => {
    const own: WorkspaceConfig = { connections: [], safety: { recovery: { maxCopyBytes: 1024 } } };
    write({ safety: { recovery: { enabled: false } } });
    const resolved = cliSafety(
      { workspace: dir } as Parameters<typeof cliSafety>[0],
      await readWorkspaceConfig(workspacePaths(dir)),
      own,
      {},
    );
    expect(resolved.settings.recovery).toEqual({ enabled: true, maxCopyBytes: 1024, retentionDays: 7 });
  });

  it('lets the workspace flag more sweeping writes (a lower share or factor), never fewer (issue 25)', async () => {
    const own: WorkspaceConfig = { connections: [], safety: { sweepingWrites: { matchesAllShare: 0.9 } } };
    write({ safety: { sweepingWrites: { matchesAllShare: 0.99, estimateFactor: 20 } } });
    const resolved = cliSafety(
      { workspace: dir } as Parameters<typeof cliSafety>[0],
      await readWorkspaceConfig(workspacePaths(dir)),
      own,
      {},
    );
    expect(resolved.settings.policy.sweepingWrites).toEqual({ matchesAllShare: 0.9, estimateFactor: 20 });
    expect(resolved.warnings.map((w) => w.setting)).toEqual(['safety.sweepingWrites.matchesAllShare']);
  });

  it("keeps the person's critical tables: a workspace may add to the list, never remove from it", () => {
    const get: SettingsGetter = <T>(key: string) =>
      ({ 'safety.criticalTables': ['public.payments'] })[key] as T | undefined;
    const resolved = resolveSafety(
      { connections: [], safety: { criticalTables: ['public.audit'] } },
      userSafety(get, DEFAULT_SAFETY),
      FILES,
    );
    expect(resolved.settings.policy.criticalTables).toEqual(['public.payments', 'public.audit']);
  });

  it('is the same in the CLI and the extension for the same own settings and workspace', async () => {
    write({ approval: { autoApproveMaxRisk: 'HIGH' }, safety: { riskThresholds: { low: 5, high: 5000 } } });
    const config = await readWorkspaceConfig(workspacePaths(dir));
    const vscode = extensionPolicy(config, {
      'approval.autoApproveMaxRisk': 'MEDIUM',
      'safety.riskThresholds': { low: 20 },
    });
    const cli = cliSafety(
      { workspace: dir } as Parameters<typeof cliSafety>[0],
      config,
      { connections: [], approval: { autoApproveMaxRisk: 'MEDIUM' }, safety: { riskThresholds: { low: 20 } } },
      {},
    );
    expect(vscode.safety.settings.policy).toEqual(cli.settings.policy);
    expect(cli.settings.policy.autoApproveMaxRisk).toBe('MEDIUM');
    expect(cli.settings.policy.thresholds).toMatchObject({ low: 5, high: 1000 });
    expect(cli.warnings.map((w) => w.setting).sort()).toEqual([
      'approval.autoApproveMaxRisk',
      'safety.riskThresholds.high',
    ]);
  });

  it("treats a workspace's .vscode/settings.json like its config file: tighten only", () => {
    const ws: SettingsGetter = <T>(key: string) =>
      ({ 'approval.autoApproveMaxRisk': 'HIGH', 'planning.interactive': false })[key] as T | undefined;
    const resolved = resolveSafety(workspaceSettingsConfig(ws), DEFAULT_SAFETY, {
      workspace: 'the workspace settings',
      own: 'user settings',
    });
    expect(resolved.settings.policy.autoApproveMaxRisk).toBe('none');
    expect(resolved.warnings[0]?.message).toMatch(
      /^the workspace settings: approval\.autoApproveMaxRisk "HIGH" is ignored/,
    );
    expect(resolvePlanning(workspaceSettingsConfig(ws), DEFAULT_PLANNING, FILES).settings.interactive).toBe(true);
  });

  it('reads the planning settings of the CLI from both files', async () => {
    write({ planning: { interactive: false, maxReviewCycles: 2 } });
    const resolved = await readJobSettings({ workspace: dir } as CommonFlags, {
      XDG_CONFIG_HOME: join(dir, 'no-such-home'),
    });
    expect(resolved.settings.planning).toEqual({ interactive: true, maxReviewCycles: 2 });
    expect(resolved.warnings[0]?.file).toBe(join(dir, '.pgagent', 'config.json'));
  });

  it('refuses a database key that is not an identity, and a malformed own config, with the file named', async () => {
    const own = join(dir, 'own.json');
    writeFileSync(
      own,
      JSON.stringify({ approval: { databases: { 'postgres://db/shop': { requireSignature: true } } } }),
    );
    await expect(readConfigFile(own)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining(own) as unknown,
    });
    await expect(readConfigFile(own)).rejects.toThrow(/approval\.databases.*system_identifier/);
    writeFileSync(own, '{"approval": ');
    await expect(readConfigFile(own)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: `${own} is not valid JSON.`,
    });
    writeFileSync(
      own,
      JSON.stringify({ approval: { databases: { '7712163443514398832/shop': { requireSignature: true } } } }),
    );
    expect((await readConfigFile(own)).approval?.databases).toEqual({
      '7712163443514398832/shop': { requireSignature: true },
    });
  });

  it('keeps the stricter approval policy and warns when the workspace asks for less than the person', () => {
    const own = {
      connections: [],
      approval: { policy: { requireSignature: true, twoPersonAbove: 'MEDIUM' as const } },
    };
    const ws = {
      connections: [],
      approval: {
        policy: { requireSignature: false, twoPersonAbove: 'CRITICAL' as const, noSelfApprovalAbove: 'LOW' as const },
      },
    };
    const resolved = cliSafety({ workspace: dir } as Parameters<typeof cliSafety>[0], ws, own, {});
    expect(resolved.settings.approvalRules?.policy).toEqual({
      requireSignature: true,
      twoPersonAbove: 'MEDIUM',
      noSelfApprovalAbove: 'LOW',
    });
    expect(resolved.warnings.map((w) => w.setting).sort()).toEqual([
      'approval.policy.requireSignature',
      'approval.policy.twoPersonAbove',
    ]);
  });
});

describe('strictestPolicy', () => {
  it('takes the stricter of each field: a signature if either wants one, the lower risk level for two persons and self-approval', () => {
    expect(
      strictestPolicy(
        { requireSignature: true, twoPersonAbove: 'HIGH' },
        { twoPersonAbove: 'LOW', noSelfApprovalAbove: 'none' },
      ),
    ).toEqual({
      requireSignature: true,
      twoPersonAbove: 'LOW',
      noSelfApprovalAbove: 'none',
    });
    expect(strictestPolicy({ twoPersonAbove: 'none' }, { twoPersonAbove: 'LOW' }).twoPersonAbove).toBe('none');
    expect(strictestPolicy({}, {})).toEqual({});
  });

  it('asks for a role both accept where both name roles for a risk, and keeps a role list only one names', () => {
    expect(
      strictestPolicy({ rolesFor: { HIGH: ['dba', 'lead'] } }, { rolesFor: { HIGH: ['dba'], CRITICAL: ['cto'] } })
        .rolesFor,
    ).toEqual({ HIGH: ['dba'], CRITICAL: ['cto'] });
  });
});
