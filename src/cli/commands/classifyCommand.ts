/** `pg-agent classify`: what the parser says the SQL is, statement by statement, and why. */
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { columns } from '../format';
import { classifyInput } from '../sqlInput';
import { shownStatement } from '../shownSql';
import { visibleText } from '../../shared/visibleSql';

export const classifyCommand: CliCommand = {
  name: 'classify',
  summary: 'statements, node kinds, class and reasons of SQL, without touching a database',
  usage: 'pg-agent classify [flags] [--] <SQL | ->',
  options: {},
  async run(context) {
    const { classification } = await classifyInput(context);
    const { io, args } = context;
    if (args.flags.json) {
      io.stdout(`${JSON.stringify(classification, null, 2)}\n`);
      return EXIT.ok;
    }
    io.stdout(`class ${classification.class} · ${classification.decision === 'run' ? 'runs read-only' : classification.decision === 'approve' ? 'needs approval' : 'refused'}\n`);
    for (const [i, s] of classification.statements.entries()) {
      io.stdout(`\n${i + 1}. ${shownStatement(s.sql).text}\n`);
      io.stdout(`${columns([
        ['kind', s.kind],
        ['class', `${s.class} (${s.decision})`],
        ['nodes', s.nodeKinds.join(', ')],
        ...(s.writesTo.length > 0 ? [['writes', s.writesTo.join(', ')]] : []),
      ], '   ')}\n`);
      for (const r of s.reasons) io.stdout(visibleText(`   - ${r}\n`));
    }
    const extra = classification.reasons.filter((r) => !classification.statements.some((s) => s.reasons.includes(r)));
    for (const r of extra) io.stdout(`\n- ${r}\n`);
    return EXIT.ok;
  },
};
