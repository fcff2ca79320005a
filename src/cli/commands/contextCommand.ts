/** `pg-agent context`: the tables and columns the agent would give the model for a question, ranked, with token count. */
import type { SchemaContext } from '../../core/ask/schemaContext';
import { AgentError } from '../../core/platform/errors';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { columns, formatCount } from '../../core/present/format';
import { contextJson } from '../../core/present/outputJson';

/** The same default as the extension setting `postgresAgent.context.tokenBudget`. */
export const DEFAULT_CONTEXT_BUDGET = 6000;

export const contextCommand: CliCommand = {
  name: 'context',
  summary: 'the tables and columns the model would be shown for a question, ranked, with token count',
  usage: 'pg-agent context [--budget N] [--samples] [--show-text] [flags] [--] <question | ->',
  options: {
    budget: { type: 'string' },
    samples: { type: 'boolean' },
    'show-text': { type: 'boolean' },
  },
  optionsHelp: `  --budget N          token budget of the context (default ${DEFAULT_CONTEXT_BUDGET})
  --samples           also match a few common values per column (from pg_stats; reads data statistics)
  --show-text         also print the context text exactly as the model gets it`,
  async run({ args, io, loadContext, readText }) {
    const budget = parseBudget(args.options.budget);
    const question = (await readText()).trim();
    if (question === '') {
      throw new AgentError(
        'BAD_INPUT',
        'The question is empty.',
        'Pass it after the flags, e.g. pg-agent context -- "orders per customer last month", or "-" to read stdin.',
      );
    }
    const context = await loadContext(
      question,
      { budgetTokens: budget },
      args.options.samples === true ? { sampleValues: true } : {},
    );
    if (args.flags.json) {
      io.stdout(`${JSON.stringify(contextJson(context))}\n`);
      return EXIT.ok;
    }
    io.stdout(`${renderContext(context, args.options['show-text'] === true)}\n`);
    return EXIT.ok;
  },
};

export function parseBudget(value: string | boolean | undefined): number {
  if (value === undefined) return DEFAULT_CONTEXT_BUDGET;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) <= 0) {
    throw new AgentError('BAD_INPUT', `--budget needs a positive whole number of tokens, got "${String(value)}".`);
  }
  return Number(value);
}

function renderContext(context: SchemaContext, showText: boolean): string {
  const lines: string[] = [];
  if (context.tables.length === 0) lines.push('No table matches the question.');
  else {
    lines.push(
      columns(
        context.tables.map((t, i) => [
          `${i + 1}.`,
          `${t.schema}.${t.name}${t.members ? ` (+${t.members.length - 1} like it)` : ''}${t.schemas ? ` (same in ${t.schemas.length} schemas)` : ''}`,
          t.score.toFixed(3),
          t.columns.join(', '),
        ]),
        '',
      ),
    );
  }
  lines.push(
    '',
    `${formatCount(context.tokens)} of ${formatCount(context.budget)} tokens (the whole schema: ${formatCount(context.schemaTokens)})`,
  );
  if (showText && context.text !== '') lines.push('', context.text);
  return lines.join('\n');
}
