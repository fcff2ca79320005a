/** What the SQL commands share: reading the input, the safety settings from flags, ticket summaries. */
import type { CheckedSql } from '../core/sql/reach/checkSql';
import { checkSqlParsed } from '../core/sql/reach/checkSql';
import { checkSqlText } from '../core/sql/sqlText';
import type { ImpactReport } from '../shared/impactReport';
import type { SafetySettings } from '../core/sql/safetySettings';
import { DEFAULT_SAFETY } from '../core/sql/safetySettings';
import type { CommonFlags } from './args';
import type { Env } from '../core/db/connectionTarget';
import { ownConfigFile, readOwnConfig } from '../core/config/ownConfig';
import type { WorkspaceConfig } from '../core/config/workspace';
import { readWorkspaceConfig, workspacePaths } from '../core/config/workspace';
import type { PolicyWarning, Resolved } from '../core/settings/workspacePolicy';
import { safetyInForce } from '../core/settings/workspacePolicy';
import type { CliIo, CommandContext } from './command';
import type { HistoryOrigin } from '../core/sql/history/historyEntry';
import { historyFor } from '../core/sql/history/historyFor';

/** The SQL text (positional or stdin); empty or NUL-containing input is bad input (exit 2). */
export async function readSqlInput(context: CommandContext): Promise<string> {
  return checkSqlText(await context.readText());
}

/** The input, parsed, classified and checked against the database's own code (reach) on the command's database. */
export async function classifyInput(context: CommandContext): Promise<CheckedSql> {
  const sql = await readSqlInput(context);
  return checkSqlParsed(await context.openDb(), sql);
}

/**
 * Limits from the flags and the person's own config ($XDG_CONFIG_HOME/pg-agent/config.json, which may loosen),
 * tightened by the workspace's .pgagent/config.json (which may not loosen: each attempt is a warning).
 * Executors read the policy again when they claim a ticket (policySources).
 */
export function cliSafetyInForce(
  flags: CommonFlags,
  workspace: WorkspaceConfig,
  own: WorkspaceConfig,
  env: Env,
): Resolved<SafetySettings> {
  const base: SafetySettings = {
    ...DEFAULT_SAFETY,
    ...(flags.maxRows !== undefined ? { maxRows: flags.maxRows } : {}),
    ...(flags.timeoutMs !== undefined
      ? { statementTimeoutMs: flags.timeoutMs, previewTimeoutMs: flags.timeoutMs }
      : {}),
  };
  const resolved = safetyInForce(base, own, [
    { config: workspace, files: { workspace: workspacePaths(flags.workspace).config, own: ownConfigFile(env) } },
  ]);
  const policySources = {
    ownConfigFile: ownConfigFile(env),
    workspaceDir: flags.workspace,
    ...(flags.connection !== undefined ? { profile: flags.connection } : {}),
    ...(env.PGPASSWORD !== undefined ? { password: env.PGPASSWORD } : {}),
  };
  return { settings: { ...resolved.settings, policySources }, warnings: resolved.warnings };
}

/** The safety settings of this command and the loosenings its workspace asked for and did not get. */
export async function cliPolicy(
  context: CommandContext,
  origin: HistoryOrigin = 'cli',
): Promise<Resolved<SafetySettings>> {
  const { flags } = context.args;
  const resolved = cliSafetyInForce(
    flags,
    await readWorkspaceConfig(workspacePaths(flags.workspace)),
    await readOwnConfig(context.io.env),
    context.io.env,
  );
  printWarnings(context.io, resolved.warnings);
  return {
    settings: {
      ...resolved.settings,
      policySources: { ...resolved.settings.policySources, logger: context.logger },
      history: historyFor(workspacePaths(flags.workspace).history, origin),
    },
    warnings: resolved.warnings,
  };
}

/** The safety settings of this command (warnings go to stderr, once per run). */
export async function cliSafety(context: CommandContext, origin: HistoryOrigin = 'cli'): Promise<SafetySettings> {
  return (await cliPolicy(context, origin)).settings;
}

/** An impact report as JSON output shows it: the workspace's ignored loosenings first among its `warnings`. */
export function withPolicyWarnings(impact: ImpactReport, warnings: readonly PolicyWarning[]): ImpactReport {
  return warnings.length === 0
    ? impact
    : { ...impact, warnings: [...warnings.map((w) => w.message), ...impact.warnings] };
}

const printed = new WeakMap<CliIo, Set<string>>();

/** Each ignored loosening, once per run, on stderr: "warning: <file>: <setting> … is ignored: …". */
export function printWarnings(io: CliIo, warnings: readonly PolicyWarning[]): void {
  const seen = printed.get(io) ?? new Set<string>();
  printed.set(io, seen);
  for (const w of warnings) {
    if (seen.has(w.message)) continue;
    seen.add(w.message);
    io.stderr(`warning: ${w.message}\n`);
  }
}
