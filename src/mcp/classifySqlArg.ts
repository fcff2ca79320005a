/** An MCP tool's `sql` argument, checked like the CLI's input and classified by the parser. */
import { AgentError } from '../core/errors';
import type { Classification } from '../core/sql/classification';
import { classifySql } from '../core/sql/classify';
import { loadParser } from '../core/sql/parse';
import { checkSqlText } from '../cli/sqlInput';

export async function classifySqlArg(sql: string): Promise<Classification> {
  checkSqlText(sql);
  await loadParser();
  return classifySql(sql);
}

/** A statement the safety policy refuses: it never runs through Postgres Agent, approved or not. */
export function refusedError(classification: Classification): AgentError {
  return new AgentError(
    'SQL_REFUSED',
    `Refused: ${classification.reasons.join('; ') || 'not allowed by the safety policy'}.`,
    'This never runs through Postgres Agent, not even with an approval. Split it into plain statements (one per call) without transaction control, session changes or side-effect functions.',
  );
}
