/** `pg-agent impact`: estimate and exact preview of a write, without running it and without a ticket. */
import { analyzeImpact } from '../../core/sql/impact';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { renderImpact } from '../../core/present/renderImpact';
import { classifyInput, cliPolicy, withPolicyWarnings } from '../sqlInput';

export const impactCommand: CliCommand = {
  name: 'impact',
  summary: 'planner estimate and exact preview (BEGIN … ROLLBACK) of SQL: rows per table, risk, would-fail',
  usage: 'pg-agent impact [flags] [--] <SQL | ->',
  options: {},
  async run(context) {
    const checked = await classifyInput(context);
    const { classification } = checked;
    const { io, args } = context;
    if (classification.decision === 'refuse') {
      io.stderr(`Refused: ${classification.reasons.join('; ')}.\n`);
      if (args.flags.json)
        io.stdout(
          `${JSON.stringify({ status: 'refused', error: { code: 'SQL_REFUSED', message: classification.reasons.join('; ') } })}\n`,
        );
      return EXIT.refused;
    }
    const { settings, warnings } = await cliPolicy(context);
    const impact = await analyzeImpact(await context.openDb(), classification, settings, checked);
    if (args.flags.json) {
      io.stdout(`${JSON.stringify(withPolicyWarnings(impact, warnings), null, 2)}\n`);
    } else {
      io.stdout(`${renderImpact(impact)}\n`);
    }
    return EXIT.ok;
  },
};
