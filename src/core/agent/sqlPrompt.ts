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

export function sqlMessages(state: AskStateValue): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You write one PostgreSQL statement that answers the question, using only the tables and columns below. ' +
        'Reply with JSON: sql (one statement, no trailing semicolon), operation ("read" or "write"), explanation (one sentence). ' +
        'Writes are reviewed by a person before they run; you cannot approve anything. ' +
        `${SAFE_DDL_GUIDANCE}\n\n` +
        `Schema:\n${state.schemaContext?.text ?? '(no tables)'}`,
    },
    { role: 'user', content: state.question },
  ];
}
