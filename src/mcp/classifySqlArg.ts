/** An MCP tool's `sql` argument, checked like the CLI's input, classified, and its reach checked. */
import { AgentError } from '../core/platform/errors';
import type { Classification } from '../core/sql/classification';
import type { Db } from '../core/db/db';
import type { CheckedSql } from '../core/sql/reach/checkSql';
import { checkSqlParsed } from '../core/sql/reach/checkSql';
import { checkSqlText } from '../core/sql/sqlText';

/** Classified by the parser and checked against the database's own code (reach), as every path does. */
export async function classifySqlArg(sql: string, db: Db): Promise<Classification> {
  return (await checkSqlArg(sql, db)).classification;
}

/** classifySqlArg with its parse kept, for the step that follows (runSql's `checked`, the impact's lock model). */
export async function checkSqlArg(sql: string, db: Db): Promise<CheckedSql> {
  checkSqlText(sql);
  return checkSqlParsed(db, sql);
}

/** A statement the safety policy refuses: it never runs through Postgres Agent, approved or not. */
export function refusedError(classification: Classification): AgentError {
  return new AgentError(
    'SQL_REFUSED',
    `Refused: ${classification.reasons.join('; ') || 'not allowed by the safety policy'}.`,
    'This never runs through Postgres Agent, not even with an approval. Split it into plain statements (one per call) without transaction control, session changes or side-effect functions.',
  );
}
