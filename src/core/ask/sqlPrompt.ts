/** What the SQL-writing model is told, and what it must answer. */
import { z } from 'zod';
import type { ChatMessage } from '../llm/provider';
import { SAFE_DDL_GUIDANCE } from '../sql/ddl/safeDdlGuidance';
import type { AskStateValue } from './state';

export const sqlAnswerSchema = z.object({
  sql: z.string().min(1),
  operation: z.enum(['read', 'write']),
  explanation: z.string(),
});

export type SqlAnswer = z.infer<typeof sqlAnswerSchema>;

/** The first answer of the SQL step may ask to look tables up instead (describe_table / find_tables). */
export const sqlOrLookupSchema = z.object({
  sql: z.string(),
  operation: z.enum(['read', 'write']),
  explanation: z.string(),
  lookup: z
    .object({
      describe: z.array(z.string()).max(10).optional(),
      find: z.array(z.string()).max(5).optional(),
    })
    .optional(),
});

export type SqlOrLookup = z.infer<typeof sqlOrLookupSchema>;

const LOOKUP_RULE =
  ' If a table or column the answer needs is not below, do not guess: reply with sql "" and lookup: ' +
  '{"describe": [table names to see in full], "find": [a few words to search table names, columns, comments and values for]}; ' +
  'you will be given what they find.';

export function sqlMessages(state: AskStateValue, options: { lookups?: boolean } = {}): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You write one PostgreSQL statement that answers the question, using only the tables and columns below. ' +
        'Reply with JSON: sql (one statement, no trailing semicolon), operation ("read" or "write"), explanation (one sentence). ' +
        'Writes are reviewed by a person before they run; you cannot approve anything. ' +
        `${SAFE_DDL_GUIDANCE}` +
        (options.lookups ? LOOKUP_RULE : '') +
        `\n\nSchema:\n${state.schemaContext?.text ?? '(no tables)'}`,
    },
    { role: 'user', content: state.question },
  ];
}
