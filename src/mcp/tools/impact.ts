/** `impact(sql)`: the planner's estimate and the exact preview (BEGIN … ROLLBACK) of SQL, as `pg-agent impact --json`. */
import { z } from 'zod';
import { analyzeImpact } from '../../core/sql/impact';
import { renderImpact } from '../../core/present/renderImpact';
import { checkSqlArg, refusedError } from '../classifySqlArg';
import { IMPACT_OUTPUT } from '../impactOutput';
import { defineTool } from '../toolSpec';

export const impactTool = defineTool({
  name: 'impact',
  title: 'Impact of a write',
  description:
    "What a write would do, without doing it: the planner's estimate and an exact preview run inside BEGIN … ROLLBACK " +
    '(rows inserted, updated and deleted per table, including foreign-key cascades and trigger effects), risk, ' +
    'and whether it would fail. Creates no ticket; call propose_write to ask a person to approve it.',
  // The preview runs the write and rolls it back; only sequence values it drew stay used (PostgreSQL's rule).
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { sql: z.string().max(100_000).describe('The write to analyse.') },
  output: IMPACT_OUTPUT,
  async run(context, { sql }) {
    const checked = await checkSqlArg(sql, await context.openDb());
    if (checked.classification.decision === 'refuse') throw refusedError(checked.classification);
    const impact = await analyzeImpact(await context.openDb(), checked.classification, context.settings, checked);
    return { structured: { ...impact }, text: renderImpact(impact) };
  },
});
