/**
 * The MCP server's operations as VS Code language-model tools (Copilot agent mode calls them in this
 * window, on the active connection): the same tool specs and core paths as `pg-agent mcp`. Before a call
 * VS Code shows our confirmation: the SQL, and for a write its measured impact. Allowing a call is not an
 * approval: propose_write only makes a ticket, which the person approves at the inline approval.
 */
import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import type { Logger } from '../../core/platform/logger';
import type { McpToolContext } from '../../mcp/toolContext';
import type { McpTool } from '../../mcp/toolSpec';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import type { LmToolName as ToolName } from './lmToolNames';
import { LM_TOOL_NAMES, LM_TOOL_PREFIX } from './lmToolNames';
import { toolMessage } from './lmToolMessages';
import { settingsPort } from '../compose/settingsPort';
import { safetySettings } from '../settings/settings';
import type { WindowTickets } from '../sqlApproval/windowTickets';

export interface LanguageModelToolsDeps {
  core: CoreLoader;
  session: DatabaseSession;
  tickets: WindowTickets;
  /** The folder holding .pgagent/. */
  rootDir: string;
  logger: Logger;
}

type Input = Record<string, unknown>;

export function registerLanguageModelTools(deps: LanguageModelToolsDeps): vscode.Disposable[] {
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  return LM_TOOL_NAMES.map((name) =>
    vscode.lm.registerTool<Input>(`${LM_TOOL_PREFIX}${name}`, new McpBackedTool(name, deps)),
  );
}

class McpBackedTool implements vscode.LanguageModelTool<Input> {
  constructor(
    private readonly name: ToolName,
    private readonly deps: LanguageModelToolsDeps,
  ) {}

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<Input>,
  ): Promise<vscode.PreparedToolInvocation> {
    const message = await toolMessage(this.name, options.input, {
      impact: async (sql) => (await this.toolNamed('impact').run(await this.context(), { sql })).text,
      ticket: async (id) => {
        const ticket = await (await this.deps.tickets.ticketStore()).get(id);
        return (
          ticket && {
            sql: ticket.sql,
            status: ticket.status,
            risk: ticket.risk,
            rows: ticket.impact.exactRows ?? ticket.impact.estimatedRows ?? 0,
          }
        );
      },
    });
    if (!message.confirmation) return { invocationMessage: message.invocation };
    const markdown = new vscode.MarkdownString(message.confirmation.markdown);
    // Shown as written: no command links, no HTML.
    markdown.isTrusted = false;
    markdown.supportHtml = false;
    return {
      invocationMessage: message.invocation,
      confirmationMessages: { title: message.confirmation.title, message: markdown },
    };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<Input>): Promise<vscode.LanguageModelToolResult> {
    const services = this.deps.core();
    try {
      const result = await this.tool().run(await this.context(), options.input);
      // Only the text: it carries database content inside the untrusted-data delimiters (the structured JSON,
      // for MCP clients' programs, would hand the model rows undelimited).
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result.text)]);
    } catch (error) {
      // The model sees our code, message and advice, as an MCP client would.
      throw new Error(services.toolErrorText(services.toolErrorInfo(error)).join('\n'));
    }
  }

  private tool(): McpTool {
    return this.toolNamed(this.name);
  }

  private toolNamed(name: ToolName): McpTool {
    const tool = this.deps.core().MCP_TOOLS.find((t) => t.name === name);
    if (!tool) throw new Error(`No tool ${name} in the services bundle.`);
    return tool;
  }

  /** The window's active connection, ticket store and settings: the same core paths as pg-agent mcp. */
  private async context(): Promise<McpToolContext> {
    const { db, key } = await this.deps.session.database();
    const config = vscode.workspace.getConfiguration('postgresAgent');
    return {
      openDb: () => Promise.resolve(db),
      connectionKey: () => Promise.resolve(key),
      openTicketStore: () => this.deps.tickets.ticketStore(),
      loadSchema: () => this.deps.session.loadSnapshot(),
      settings: await safetySettings(settingsPort(this.deps.core), this.deps.rootDir),
      workspaceDir: this.deps.rootDir,
      contextBudget: config.get<number>('context.tokenBudget') ?? 6000,
      proposedBy: () => 'agent in VS Code chat',
      executedBy: userInfo().username,
      logger: this.deps.logger,
    };
  }
}
