// Schema context on a 2,000-table / 40,000-column schema (synthetic, no database): time to rank and fit
// per question — cold (term index built for a snapshot seen for the first time) and warm (the index of
// the same snapshot reused, as for every further question) — and tokens in the context vs the whole schema.
import { buildSchemaContext } from '../src/core/ask/schemaContext';
import { bigSnapshot } from '../test/fixtures/bigSchema';
import { percentile, report } from './stats';

const QUESTIONS = [
  'how much did each customer spend last month',
  'which products are out of stock',
  'top 10 orders by total this year',
  'average salary by department',
  'employees hired in 2024',
  'payments per order for customer 42',
  'count orderItems per product',
  'show the audit trail for module 17',
  'sessions that are still open',
  'list the job queue entries that failed yesterday',
];
const RUNS = 20;
const BUDGET = 6000;

function main(): void {
  const snapshot = bigSnapshot();
  const columnCount = snapshot.tables.reduce((n, t) => n + t.columns.length, 0);
  console.log(
    `synthetic schema: ${snapshot.tables.length} tables, ${columnCount} columns, budget ${BUDGET} tokens, ${RUNS} runs per question`,
  );
  for (let i = 0; i < 5; i++) buildSchemaContext({ ...snapshot }, QUESTIONS[0] ?? '', { budgetTokens: BUDGET });

  const cold: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const fresh = { ...snapshot }; // a new snapshot object: the term index is built again
    const start = performance.now();
    buildSchemaContext(fresh, QUESTIONS[i % QUESTIONS.length] ?? '', { budgetTokens: BUDGET });
    cold.push(performance.now() - start);
  }
  report('cold (index built): p50', percentile(cold, 50), 'ms');
  report('cold (index built): p95', percentile(cold, 95), 'ms');

  const all: number[] = [];
  for (const question of QUESTIONS) {
    const times: number[] = [];
    let context = buildSchemaContext(snapshot, question, { budgetTokens: BUDGET });
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      context = buildSchemaContext(snapshot, question, { budgetTokens: BUDGET });
      times.push(performance.now() - start);
    }
    all.push(...times);
    const top = context.tables
      .slice(0, 3)
      .map((t) => t.name)
      .join(', ');
    report(
      `"${question}"`,
      `p50 ${percentile(times, 50).toFixed(2)} ms · p95 ${percentile(times, 95).toFixed(2)} ms · ${context.tables.length} tables, ${context.tokens} tokens · ${top}`,
    );
  }
  report('warm, all questions: p50', percentile(all, 50), 'ms');
  report('warm, all questions: p95', percentile(all, 95), 'ms');
  const context = buildSchemaContext(snapshot, QUESTIONS[0] ?? '', { budgetTokens: BUDGET });
  report('tokens: whole schema (schemaTokens)', context.schemaTokens, 'tokens');
  report(`tokens: context for "${QUESTIONS[0] ?? ''}"`, context.tokens, 'tokens');
  report('whole schema / context', context.schemaTokens / Math.max(1, context.tokens), '×');
  const tight = buildSchemaContext(snapshot, QUESTIONS[0] ?? '', { budgetTokens: 2000 });
  report('same question, budget 2000', `${tight.tokens} tokens · ${tight.tables.map((t) => t.name).join(', ')}`);
}

main();
