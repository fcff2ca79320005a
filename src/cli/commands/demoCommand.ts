/**
 * `pg-agent demo`: a guided tour on the embedded sample database that needs no server and no API key.
 * It opens (and on first use generates) the sample database and shows what the agent sees of it.
 */
import { introspectSchema } from '../../core/db/introspect';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { formatCount } from '../format';
import { renderSchema } from './schemaCommand';

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'a guided tour on the embedded sample database (no server, no API key)',
  usage: 'pg-agent demo [flags]',
  options: {},
  description: 'Always runs on the embedded sample database in <workspace>/.pgagent/sample-db/, whatever --db says.',
  async run({ io, openDb, args }) {
    const say = (text: string) => io.stdout(`${text}\n`);
    say('Postgres Agent demo: the embedded sample database (PostgreSQL in this process, nothing to install).');
    const started = performance.now();
    const db = await openDb();
    const snapshot = await db.withSession((session) => introspectSchema(session));
    const ms = Math.round(performance.now() - started);
    const rows = snapshot.tables.reduce((sum, t) => sum + (t.rowEstimate ?? 0), 0);
    if (args.flags.json) {
      io.stdout(`${JSON.stringify({ database: db.label, openMs: ms, rows, schema: snapshot }, null, 2)}\n`);
      return EXIT.ok;
    }
    say(`Opened ${db.label} in ${formatCount(ms)} ms: ~${formatCount(rows)} rows.\n`);
    say('Step 1 · What the agent knows about the database (pg-agent schema):\n');
    say(renderSchema(snapshot, db.label, true));
    say('\nTry next:');
    say('  pg-agent schema --table orders     columns, keys, indexes and triggers of one table');
    say('  pg-agent schema --json             the same as JSON, for scripts');
    return EXIT.ok;
  },
};
