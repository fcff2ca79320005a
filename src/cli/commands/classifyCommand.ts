/** `pg-agent classify`: what the parser says the SQL is, statement by statement, what database code it runs, and why. */
import { classifySql } from '../../core/sql/classify';
import { loadParser } from '../../core/sql/parse';
import { checkSql } from '../../core/sql/reach/checkSql';
import { describeError } from '../../core/platform/errors';
import { describeReach, reachToShow } from '../../shared/reachPhrases';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { columns } from '../../core/present/format';
import { readSqlInput } from '../sqlInput';
import { shownStatement } from '../../core/present/shownSql';
import { visibleText } from '../../shared/visibleSql';

export const classifyCommand: CliCommand = {
  name: 'classify',
  summary: 'statements, node kinds, class and reasons of SQL, and the database code each would run (reach)',
  usage: 'pg-agent classify [flags] [--] <SQL | ->',
  description:
    'Nothing runs. The reach (functions, triggers, rules, views… a statement makes the database run) is read from\n' +
    "the catalog of the database the flags select; when it cannot be opened, the parser's verdict alone is shown.",
  options: {},
  async run(context) {
    const { io, args } = context;
    const sql = await readSqlInput(context);
    await loadParser();
    const parsed = classifySql(sql); // bad input fails here (exit 2) before any database is opened
    const classification = await context
      .openDb()
      .then((db) => checkSql(db, sql))
      .catch((error: unknown) => {
        io.stderr(`Reach not checked (the database's own code was not looked at): ${describeError(error)}\n`);
        return parsed;
      });
    if (args.flags.json) {
      io.stdout(`${JSON.stringify(classification, null, 2)}\n`);
      return EXIT.ok;
    }
    io.stdout(
      `class ${classification.class} · ${classification.decision === 'run' ? 'runs read-only' : classification.decision === 'approve' ? 'needs approval' : 'refused'}\n`,
    );
    for (const [i, s] of classification.statements.entries()) {
      io.stdout(`\n${i + 1}. ${shownStatement(s.sql).text}\n`);
      io.stdout(
        `${columns(
          [
            ['kind', s.kind],
            ['class', `${s.class} (${s.decision})`],
            ['nodes', s.nodeKinds.join(', ')],
            ...(s.writesTo.length > 0 ? [['writes', s.writesTo.join(', ')]] : []),
          ],
          '   ',
        )}\n`,
      );
      for (const r of s.reasons) io.stdout(visibleText(`   - ${r}\n`));
      const { shown, safeLeftOut } = reachToShow(s.reach ?? []);
      for (const entry of shown) io.stdout(`   runs ${describeReach(entry)}\n`);
      if (safeLeftOut > 0)
        io.stdout(`   runs ${safeLeftOut} more function${safeLeftOut === 1 ? '' : 's'} that only compute\n`);
    }
    const extra = classification.reasons.filter((r) => !classification.statements.some((s) => s.reasons.includes(r)));
    for (const r of extra) io.stdout(`\n- ${r}\n`);
    return EXIT.ok;
  },
};
