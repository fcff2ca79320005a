/** SQL text as it arrives from a person or an agent (a CLI argument, stdin, an MCP tool's argument). */
import { AgentError } from '../platform/errors';

/** Empty or NUL-containing SQL is bad input (the CLI exits 2); anything else is returned as it came. */
export function checkSqlText(sql: string): string {
  if (sql.includes('\u0000')) {
    throw new AgentError(
      'BAD_INPUT',
      'The SQL contains a NUL byte, which PostgreSQL cannot take.',
      'Remove it (binary data belongs in a bytea literal).',
    );
  }
  if (sql.trim() === '') {
    throw new AgentError(
      'SQL_EMPTY',
      'No SQL given.',
      'Pass it after the command (use -- if it starts with a dash) or - to read it from stdin.',
    );
  }
  return sql;
}
