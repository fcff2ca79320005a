/**
 * `pg-agent demo`: a guided tour on the embedded sample database that needs no server and no API key:
 * the schema the agent sees, a read (run at once, read-only), then a risky write (previewed, its exact
 * impact shown with cascades and a trigger, held for approval; on a terminal you may approve it and
 * get its undo script).
 */
import type { CliCommand, CommandContext } from '../command';
import { EXIT } from '../exitCodes';
import type { ExitCode } from '../exitCodes';
import { formatCount } from '../../core/present/format';
import { renderSchema } from './schemaCommand';
import { sqlCommand } from './sqlCommand';

const READ = `SELECT status, count(*) AS orders, sum(total) AS revenue
FROM orders GROUP BY status ORDER BY orders DESC`;

const WRITE = `DELETE FROM orders WHERE status = 'cancelled' AND created_at < '2024-01-01'`;

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'a guided tour on the embedded sample database (no server, no API key)',
  usage: 'pg-agent demo [flags]',
  options: {},
  description:
    'Always runs on the embedded sample database in <workspace>/.pgagent/sample-db/, whatever --db says.\n' +
    'Delete that folder to start again from the original data.',
  async run(context) {
    const { io, args } = context;
    const say = (text: string) => io.stdout(`${text}\n`);
    say('Postgres Agent demo: the embedded sample database (PostgreSQL in this process, nothing to install).');
    const started = performance.now();
    const db = await context.openDb();
    const snapshot = await context.loadSchema();
    const ms = Math.round(performance.now() - started);
    const rows = snapshot.tables.reduce((sum, t) => sum + (t.rowEstimate ?? 0), 0);
    if (args.flags.json) {
      io.stdout(`${JSON.stringify({ database: db.label, openMs: ms, rows, schema: snapshot }, null, 2)}\n`);
      return EXIT.ok;
    }
    say(`Opened ${db.label} in ${formatCount(ms)} ms: ~${formatCount(rows)} rows.\n`);
    say('Step 1 · What the agent knows about the database (pg-agent schema):\n');
    say(renderSchema(snapshot, db.label, true));

    say(
      `\nStep 2 · A read runs at once, in a READ ONLY transaction with a row cap (pg-agent sql):\n\n${indent(READ)}\n`,
    );
    const read = await step(context, READ);
    if (read !== EXIT.ok) return read;

    // The statement itself is printed once, by the sql step, with its impact.
    say(
      `\nStep 3 · A write never runs on its own. It is previewed in BEGIN … ROLLBACK to measure its exact\nimpact — rows per table, foreign-key cascades, triggers — and waits for a person:\n`,
    );
    const write = await step(context, WRITE);
    say('\nWhat next:');
    // Each line runs as printed, on the same sample database.
    say('  pg-agent approvals list                                  tickets waiting for a decision');
    say('  pg-agent schema --db sample --table orders               columns, keys, indexes and triggers');
    say('  pg-agent sql --db sample -- "SELECT count(*) FROM customers"   your own SQL, same safety path');
    say('  Your own database: see "Your own database in five minutes" in README.md');
    return write === EXIT.held || write === EXIT.ok ? EXIT.ok : write;
  },
};

/** One step of the tour through the real `sql` command, on the same database. */
function step(context: CommandContext, sql: string): Promise<ExitCode> {
  return sqlCommand.run({ ...context, readText: () => Promise.resolve(sql) });
}

function indent(sql: string): string {
  return sql
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
