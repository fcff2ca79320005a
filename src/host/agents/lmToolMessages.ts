/**
 * What VS Code shows before one of our language-model tools runs: a progress line and, for SQL, a
 * confirmation with the statement and (for a proposed write) its measured impact. Plain text and markdown,
 * no `vscode` import, so it is unit-tested; languageModelTools.ts wraps it in VS Code's types.
 */
import { fenced } from '../sqlApproval/approvalTexts';
import { hiddenWarning, visibleSql, visibleText } from '../../shared/visibleSql';
import type { LmToolName } from './lmToolNames';

export interface ToolMessage {
  invocation: string;
  /** Markdown; undefined when the call needs no confirmation (schema and ticket lookups). */
  confirmation?: { title: string; markdown: string };
}

/** What the messages need to know beyond the call's input; each may fail (it is then said so in the message). */
export interface ToolMessageFacts {
  /** The rendered impact report of `sql` (a preview rolled back). */
  impact: (sql: string) => Promise<string>;
  /** The ticket's own SQL, status, risk and approved rows, or undefined when there is none. */
  ticket: (id: string) => Promise<{ sql: string; status: string; risk: string; rows: number } | undefined>;
}

export async function toolMessage(
  name: LmToolName,
  input: Record<string, unknown>,
  facts: ToolMessageFacts,
): Promise<ToolMessage> {
  const sql = typeof input.sql === 'string' ? input.sql : '';
  const ticketId = typeof input.ticket_id === 'string' ? input.ticket_id : '';
  switch (name) {
    case 'list_tables':
    case 'describe_table':
    case 'schema_context':
      return { invocation: 'Postgres Agent: reading the schema' };
    case 'ticket_status':
      return { invocation: `Postgres Agent: status of ticket ${ticketId}` };
    case 'health':
      return { invocation: 'Postgres Agent: running the health checks (read-only catalog queries)' };
    case 'top_queries':
      return { invocation: 'Postgres Agent: reading the heaviest queries (pg_stat_statements)' };
    case 'advise_indexes':
      return {
        invocation: 'Postgres Agent: advising indexes',
        ...(sql !== ''
          ? {
              confirmation: {
                title: 'Advise indexes for this query?',
                markdown: `${statement(sql)}\n\nPlanned with EXPLAIN (and hypothetical indexes) in a READ ONLY transaction: nothing is executed or built.`,
              },
            }
          : {}),
      };
    case 'run_read':
      return {
        invocation: 'Postgres Agent: running a read',
        confirmation: {
          title: 'Run this read?',
          markdown: `${statement(sql)}\n\nRuns READ ONLY with a row cap and timeouts; its rows go to the model.`,
        },
      };
    case 'explain':
      return {
        invocation: 'Postgres Agent: explaining',
        confirmation: {
          title: 'Explain this statement?',
          markdown: `${statement(sql)}\n\nEXPLAIN without ANALYZE: nothing is executed.`,
        },
      };
    case 'impact':
      return {
        invocation: 'Postgres Agent: previewing the impact',
        confirmation: {
          title: 'Preview this write?',
          markdown: `${statement(sql)}\n\nRuns inside BEGIN … ROLLBACK to count the rows it would change; nothing stays (sequence values it draws are not given back).`,
        },
      };
    case 'propose_write': {
      const reason =
        typeof input.reason === 'string' && input.reason.trim() !== ''
          ? `**Reason given by the agent:** ${plain(input.reason.replace(/\s+/g, ' ').slice(0, 500))}\n\n`
          : '';
      let impact: string;
      try {
        impact = fenced(await facts.impact(sql), 'text');
      } catch (error) {
        impact = `**Impact could not be measured:** ${plain(error instanceof Error ? error.message : String(error))}`;
      }
      return {
        invocation: 'Postgres Agent: proposing a write for your approval',
        confirmation: {
          title: 'Let the agent propose this write?',
          markdown: `${statement(sql)}\n\n${reason}${impact}\n\nAllowing this creates an approval ticket only: **nothing runs** until you approve it at the CodeLens or in the Postgres Agent panel.`,
        },
      };
    }
    case 'execute_approved': {
      let markdown: string;
      try {
        const ticket = await facts.ticket(ticketId);
        markdown = ticket
          ? `${statement(ticket.sql)}\n\nTicket ${plain(ticketId)} is **${ticket.status}** · ${ticket.risk} · ${ticket.rows.toLocaleString('en-US')} rows approved. Runs exactly this SQL once.`
          : `There is no ticket ${plain(ticketId)}; the call will fail.`;
      } catch (error) {
        markdown = `Ticket ${plain(ticketId)} cannot be read: ${plain(error instanceof Error ? error.message : String(error))}`;
      }
      return {
        invocation: `Postgres Agent: running approved ticket ${ticketId}`,
        confirmation: { title: 'Run this approved write?', markdown },
      };
    }
  }
}

/**
 * The statement as it runs: every hidden character shown (raw, a bidi override would reorder the text drawn),
 * and a flag when it holds any (SPEC §5 3a).
 */
function statement(sql: string): string {
  const { text, hidden } = visibleSql(sql);
  return hidden.length === 0
    ? fenced(text, 'sql')
    : `${fenced(text, 'sql')}\n\n**⚠ This statement ${plain(hiddenWarning(hidden))}.** It runs with them, exactly as shown.`;
}

/** Model- or database-written text shown as text: hidden characters shown, markdown's special characters escaped. */
function plain(text: string): string {
  return visibleText(text).replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, '\\$&');
}
