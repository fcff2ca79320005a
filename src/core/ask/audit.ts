/**
 * Append-only audit trail of a run: `.pgagent/runs/<thread>/audit.jsonl`, one JSON event per line, its passwords
 * hidden (withRedactedPasswords).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChatMessage } from '../llm/provider';
import { withRedactedPasswords } from '../sql/secrets/textPasswords';
import { assertThreadId } from './threadId';

export type AuditEvent =
  | {
      type: 'model_call';
      node: string;
      model: string;
      messages: ChatMessage[];
      response: string;
      inputTokens: number;
      outputTokens: number;
      latencyMs: number;
      costUsd: number | null;
    }
  | { type: 'sql'; node: string; sql: string; outcome: string; detail?: string }
  | { type: 'approval'; ticketId: string; approve: boolean; by: string; comment?: string; recorded: boolean }
  | { type: 'error'; node: string; code: string; message: string };

export interface AuditLog {
  record(threadId: string, event: AuditEvent): Promise<void>;
}

export function fileAuditLog(runsDir: string): AuditLog {
  return {
    async record(threadId, event) {
      assertThreadId(threadId);
      const dir = join(runsDir, threadId);
      await mkdir(dir, { recursive: true });
      // A model may quote a password (a model's answer is audited before its SQL is checked): never kept in clear.
      const line = JSON.stringify(withRedactedPasswords({ at: new Date().toISOString(), ...event }));
      await appendFile(join(dir, 'audit.jsonl'), `${line}\n`);
    },
  };
}

export const noAuditLog: AuditLog = { record: () => Promise.resolve() };
