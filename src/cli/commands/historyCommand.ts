/** `pg-agent history`: what ran through pg-agent (CLI, VS Code, MCP, guard) on a database, newest first. */
import { describeTarget } from '../../core/db/connectionTarget';
import { workspacePaths } from '../../core/config/workspace';
import { historyDatabaseKey } from '../../core/sql/history/historyEntry';
import type { HistoryEntry } from '../../core/sql/history/historyEntry';
import { readHistory } from '../../core/sql/history/readHistory';
import { shownOneLine } from '../../core/present/shownSql';
import { AgentError } from '../../core/platform/errors';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { parseLimit } from './topCommand';

export const historyCommand: CliCommand = {
  name: 'history',
  summary: 'what ran through pg-agent on a database (reads, writes with their ticket), newest first',
  usage: 'pg-agent history [--db URL | --connection NAME] [--grep TEXT] [--limit N] [--json]',
  options: { grep: { type: 'string' }, limit: { type: 'string' } },
  optionsHelp: `  --grep TEXT         only entries whose SQL, person, origin, ticket or error contains TEXT (any case)
  --limit N           how many entries (default 50, at most 500)`,
  description:
    'Read from .pgagent/history/ (one JSON-lines file per database). Without --db or --connection: every database.\n' +
    'Passwords never appear: a statement that sets one is kept and run as its SCRAM-SHA-256 verifier.',
  async run({ args, io, target }) {
    const grep = args.options.grep;
    if (grep !== undefined && (typeof grep !== 'string' || grep.length === 0))
      throw new AgentError('BAD_INPUT', '--grep takes a text to look for.');
    const limit = parseLimit(args.options.limit, 50);
    const named = args.flags.db !== undefined || args.flags.connection !== undefined;
    const db = named ? historyDatabaseKey(describeTarget(await target())) : undefined;
    const entries = await readHistory(workspacePaths(args.flags.workspace).history, {
      ...(db !== undefined ? { db } : {}),
      ...(grep !== undefined ? { grep } : {}),
      limit,
    });
    if (args.flags.json) {
      io.stdout(`${JSON.stringify({ entries }, null, 2)}\n`);
      return EXIT.ok;
    }
    if (entries.length === 0) {
      io.stdout(
        `No history${db !== undefined ? ` for ${db}` : ''}${grep !== undefined ? ` matching "${grep}"` : ''}.\n`,
      );
      return EXIT.ok;
    }
    for (const entry of entries) io.stdout(`${historyLine(entry)}\n`);
    return EXIT.ok;
  },
};

function historyLine(e: HistoryEntry): string {
  const rows = e.rows === null ? '' : ` · ${e.rows} row${e.rows === 1 ? '' : 's'}`;
  const ms = e.ms === null ? '' : ` · ${e.ms} ms`;
  const ticket = e.ticket ? ` · ticket ${e.ticket}` : '';
  const repeats = e.repeats ? ` · ${e.repeats} runs of this shape (other numbers) within a minute` : '';
  const failed = e.status === 'error' ? ` · failed: ${shownOneLine(e.error ?? '', 80)}` : '';
  return `${e.at.replace('T', ' ').slice(0, 19)}  ${e.db}  ${e.origin}/${e.who}  ${e.kind}${repeats}${rows}${ms}${ticket}${failed}\n    ${shownOneLine(e.sql, 200)}`;
}
