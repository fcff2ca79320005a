// One policy per workspace (issue 12): the CLI and the extension compute the same safety and planning
// policy from one .pgagent/config.json, whatever a person set for themselves underneath.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readPlanningSettings } from '../../src/cli/jobSetup';
import { safetySettings as cliSafety } from '../../src/cli/sqlInput';
import { DEFAULT_PLANNING } from '../../src/core/jobs/jobRunner';
import { assessRisk } from '../../src/core/sql/risk';
import { DEFAULT_SAFETY } from '../../src/core/sql/safetySettings';
import { readWorkspaceConfig, workspacePaths } from '../../src/core/workspace';
import { resolvePlanning, resolveSafety } from '../../src/core/workspacePolicy';
import type { SettingsGetter } from '../../src/host/policyFromSettings';
import { userPlanning, userSafety } from '../../src/host/policyFromSettings';

/** What the extension computes (src/host/settings.ts) with these VS Code settings. */
function extensionPolicy(config: Awaited<ReturnType<typeof readWorkspaceConfig>>, settings: Record<string, unknown>) {
  const get: SettingsGetter = <T>(key: string) => settings[key] as T | undefined;
  return { safety: resolveSafety(config, userSafety(get, DEFAULT_SAFETY)), planning: resolvePlanning(config, userPlanning(get, DEFAULT_PLANNING)) };
}

describe('the workspace policy', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pgagent-policy-'));
    mkdirSync(join(dir, '.pgagent'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is the same in the CLI and the extension, whatever the person set in VS Code', async () => {
    writeFileSync(
      join(dir, '.pgagent', 'config.json'),
      JSON.stringify({
        approval: { autoApproveMaxRisk: 'LOW' },
        safety: { criticalTables: ['public.payments'], riskThresholds: { low: 5, high: 500 } },
        planning: { interactive: true, maxReviewCycles: 2 },
      }),
    );
    const config = await readWorkspaceConfig(workspacePaths(dir));
    // A person who relaxed everything for themselves.
    const vscode = extensionPolicy(config, {
      'approval.autoApproveMaxRisk': 'HIGH',
      'safety.criticalTables': [],
      'safety.riskThresholds': { low: 1000, medium: 5000, high: 10000 },
      'planning.interactive': false,
      'planning.maxReviewCycles': 9,
    });
    const cli = cliSafety({ workspace: dir } as Parameters<typeof cliSafety>[0], config);
    expect(vscode.safety.policy).toEqual(cli.policy);
    expect(cli.policy).toEqual({ autoApproveMaxRisk: 'LOW', criticalTables: ['public.payments'], thresholds: { ...DEFAULT_SAFETY.policy.thresholds, low: 5, high: 500 } });
    expect(vscode.planning).toEqual(await readPlanningSettings(dir));
    expect(vscode.planning).toEqual({ interactive: true, maxReviewCycles: 2 });
    // The same write gets the same risk wherever it was typed.
    const input = { classification: { statements: [] }, rows: 50, tables: ['public.payments'] } as unknown as Parameters<typeof assessRisk>[0];
    expect(assessRisk(input, vscode.safety.policy)).toEqual(assessRisk(input, cli.policy));
  });

  it('leaves what the workspace does not say to the person\'s own settings (the extension) or the defaults (the CLI)', async () => {
    const config = await readWorkspaceConfig(workspacePaths(dir)); // no config.json at all
    const vscode = extensionPolicy(config, { 'approval.autoApproveMaxRisk': 'MEDIUM', 'query.maxRows': 50 });
    expect(vscode.safety.policy.autoApproveMaxRisk).toBe('MEDIUM');
    expect(vscode.safety.maxRows).toBe(50);
    expect(cliSafety({ workspace: dir } as Parameters<typeof cliSafety>[0], config).policy).toEqual(DEFAULT_SAFETY.policy);
  });
});
