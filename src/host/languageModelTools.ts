/**
 * The MCP server's operations as VS Code language-model tools (Copilot agent mode calls them in this
 * window, on the active connection): the same tool specs and core paths as `pg-agent mcp`. Before a call
 * VS Code shows our confirmation: the SQL, and for a write its measured impact. Allowing a call is not an
 * approval: propose_write only makes a ticket, which the person approves at the inline approval.
 */
import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import type { Logger } from '../core/logger';
import type { McpToolContext } from '../mcp/toolContext';
import type { McpTool } from '../mcp/toolSpec';
import type { DatabaseSession } from './databaseSession';
import { coreServices } from './lazyServices';
import type { LmToolName as ToolName } from './lmToolNames';
import { LM_TOOL_NAMES, LM_TOOL_PREFIX } from './lmToolNames';
import { safetySettings } from './settings';
import type { SqlReview } from './sqlReview';


export interface LanguageModelToolsDeps {
  session: DatabaseSession;
  review: SqlReview;
  /** The folder holding .pgagent/. */
  rootDir: string;
  logger: Logger;
}

type Input = Record<string, unknown>;

export function registerLanguageModelTools(deps: LanguageModelToolsDeps): vscode.Disposable[] {
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  return LM_TOOL_NAMES.map((name) => vscode.lm.registerTool<Input>(`${LM_TOOL_PREFIX}${name}`, new McpBackedTool(name, deps)));
}

class McpBackedTool implements vscode.LanguageModelTool<Input> {
  constructor(
    private readonly name: ToolName,
    private readonly deps: LanguageModelToolsDeps,
  ) {}

  async prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<Input>): Promise<vscode.PreparedToolInvocation> {
    const sql = typeof options.input.sql === 'string' ? options.input.sql : '';
    const ticketId = typeof options.input.ticket_id === 'string' ? options.input.ticket_id : '';
    switch (this.name) {
      case 'list_tables':
      case 'describe_table':
      case 'schema_context':
        return { invocationMessage: 'Postgres Agent: reading the schema' };
      case 'ticket_status':
        return { invocationMessage: `Postgres Agent: status of ticket ${ticketId}` };
      case 'run_read':
      case 'explain':
        return {
          invocationMessage: this.name === 'run_read' ? 'Postgres Agent: running a read' : 'Postgres Agent: explaining',
          confirmationMessages: {
            title: this.name === 'run_read' ? 'Run this read?' : 'Explain this statement?',
            message: markdown(`${fenced(sql, 'sql')}\n\n${this.name === 'run_read' ? 'Runs READ ONLY with a row cap and timeouts; its rows go to the model.' : 'EXPLAIN without ANALYZE: nothing is executed.'}`),
          },
        };
      case 'impact':
        return {
          invocationMessage: 'Postgres Agent: previewing the impact',
          confirmationMessages: { title: 'Preview this write?', message: markdown(`${fenced(sql, 'sql')}\n\nRuns inside BEGIN … ROLLBACK to count the rows it would change; nothing stays (sequence values it draws are not given back).`) },
        };
      case 'propose_write':
        return {
          invocationMessage: 'Postgres Agent: proposing a write for your approval',
          confirmationMessages: { title: 'Let the agent propose this write?', message: markdown(await this.proposalPreview(sql, options.input.reason)) },
        };
      case 'execute_approved':
        return {
          invocationMessage: `Postgres Agent: running approved ticket ${ticketId}`,
          confirmationMessages: { title: 'Run this approved write?', message: markdown(await this.ticketPreview(ticketId)) },
        };
    }
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<Input>): Promise<vscode.LanguageModelToolResult> {
    const services = coreServices();
    try {
      const result = await this.tool().run(await this.context(), options.input);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result.text), new vscode.LanguageModelTextPart(JSON.stringify(result.structured))]);
    } catch (error) {
      // The model sees our code, message and advice, as an MCP client would.
      throw new Error(services.toolErrorText(services.toolErrorInfo(error)).join('\n'));
    }
  }

  /** The SQL, the reason and the measured impact (a preview rolled back); allowing it only makes a ticket. */
  private async proposalPreview(sql: string, reason: unknown): Promise<string> {
    const why = typeof reason === 'string' && reason.trim() !== '' ? `**Reason given by the agent:** ${reason.replace(/\s+/g, ' ').slice(0, 500)}\n\n` : '';
    let impact: string;
    try {
      impact = fenced((await this.toolNamed('impact').run(await this.context(), { sql })).text, 'text');
    } catch (error) {
      const info = coreServices().toolErrorInfo(error);
      impact = `**Impact could not be measured:** ${info.code}: ${info.message}`;
    }
    return `${fenced(sql, 'sql')}\n\n${why}${impact}\n\nAllowing this creates an approval ticket only: **nothing runs** until you approve it at the CodeLens or in the Postgres Agent panel.`;
  }

  /** The approved ticket's own SQL and approved impact: that, and only that, is what runs. */
  private async ticketPreview(ticketId: string): Promise<string> {
    try {
      const ticket = await (await this.deps.review.ticketStore()).get(ticketId);
      if (!ticket) return `There is no ticket ${ticketId}; the call will fail.`;
      const rows = ticket.impact.exactRows ?? ticket.impact.estimatedRows ?? 0;
      return `${fenced(ticket.sql, 'sql')}\n\nTicket ${ticket.id} is **${ticket.status}** · ${ticket.risk} · ${rows.toLocaleString('en-US')} rows approved. Runs exactly this SQL once.`;
    } catch (error) {
      return `Ticket ${ticketId} cannot be read: ${String(error)}`;
    }
  }

  private tool(): McpTool {
    return this.toolNamed(this.name);
  }

  private toolNamed(name: ToolName): McpTool {
    const tool = coreServices().MCP_TOOLS.find((t) => t.name === name);
    if (!tool) throw new Error(`No tool ${name} in the services bundle.`);
    return tool;
  }

  /** The window's active connection, ticket store and settings: the same core paths as pg-agent mcp. */
  private async context(): Promise<McpToolContext> {
    const services = coreServices();
    const { db, key } = await this.deps.session.database();
    const config = vscode.workspace.getConfiguration('postgresAgent');
    return {
      openDb: () => Promise.resolve(db),
      connectionKey: () => Promise.resolve(key),
      openTicketStore: () => this.deps.review.ticketStore(),
      loadSchema: () => db.withSession((session) => services.introspectSchema(session, { sampleValues: config.get<boolean>('schema.sampleValues') === true })),
      settings: safetySettings(services.DEFAULT_SAFETY),
      workspaceDir: this.deps.rootDir,
      contextBudget: config.get<number>('context.tokenBudget') ?? 6000,
      proposedBy: () => 'agent in VS Code chat',
      executedBy: userInfo().username,
      logger: this.deps.logger,
    };
  }
}

function markdown(text: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(text);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

/** A code block whose fence is longer than any run of backticks inside (the SQL cannot close it early). */
function fenced(text: string, language: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}
