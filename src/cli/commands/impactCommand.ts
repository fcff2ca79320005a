/** `pg-agent impact`: estimate and exact preview of a write, without running it and without a ticket. */
import { analyzeImpact } from '../../core/sql/impact';
import { readWorkspaceConfig, workspacePaths } from '../../core/workspace';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { renderImpact } from '../renderImpact';
import { classifyInput, safetySettings } from '../sqlInput';

export const impactCommand: CliCommand = {
  name: 'impact',
  summary: 'planner estimate and exact preview (BEGIN … ROLLBACK) of SQL: rows per table, risk, would-fail',
  usage: 'pg-agent impact [flags] [--] <SQL | ->',
  options: {},
  async run(context) {
    const { classification } = await classifyInput(context);
    const { io, args } = context;
    if (classification.decision === 'refuse') {
      io.stderr(`Refused: ${classification.reasons.join('; ')}.\n`);
      if (args.flags.json) io.stdout(`${JSON.stringify({ status: 'refused', error: { code: 'SQL_REFUSED', message: classification.reasons.join('; ') } })}\n`);
      return EXIT.refused;
    }
    // The workspace's policy (risk thresholds, critical tables) applies as it does for `pg-agent sql`.
    const config = await readWorkspaceConfig(workspacePaths(args.flags.workspace));
    const impact = await analyzeImpact(await context.openDb(), classification, safetySettings(args.flags, config));
    if (args.flags.json) {
      io.stdout(`${JSON.stringify(impact, null, 2)}\n`);
    } else {
      io.stdout(`${renderImpact(impact)}\n`);
    }
    return EXIT.ok;
  },
};
