/**
 * `pg-agent mcp`: the safety engine as an MCP server on stdio, for Copilot, Claude Code, Cursor, Cline.
 * Tools read, explain, preview and propose; a proposed write waits on a ticket that only a person can
 * approve (VS Code, or `pg-agent approvals approve`); an approved ticket runs once. Logs go to stderr:
 * stdout belongs to the protocol.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { openSchemaCache } from '../../core/db/openSchemaCache';
import { connectionKey, parseConnectionUrl } from '../../core/db/connectionTarget';
import type { Db } from '../../core/db/db';
import { openPostgres } from '../../core/db/postgresDb';
import { workspacePaths } from '../../core/config/workspace';
import { AgentError } from '../../core/platform/errors';
import { createMcpServer } from '../../mcp/server';
import type { McpToolContext } from '../../mcp/toolContext';
import type { CliCommand, CommandContext } from '../command';
import { EXIT } from '../exitCodes';
import { cliSafety } from '../sqlInput';
import { VERSION } from '../version';
import { DEFAULT_CONTEXT_BUDGET, parseBudget } from './contextCommand';

export const mcpCommand: CliCommand = {
  name: 'mcp',
  summary:
    'an MCP server on stdio: schema, reads, impact, proposed writes on approval tickets (never runs an unapproved write)',
  usage:
    'pg-agent mcp [--budget N] [--db URL | --connection NAME | --guard URL] [--workspace DIR] [--timeout-ms N] [--max-rows N]',
  options: { budget: { type: 'string' }, guard: { type: 'string' } },
  optionsHelp: `  --budget N          token budget of schema_context (default ${DEFAULT_CONTEXT_BUDGET})
  --guard URL         reach the database only through pg-agent guard (a guard user's URL): no database
                      credential and no ticket store here; writes are held by the guard`,
  description:
    'Speaks the Model Context Protocol on stdin/stdout until stdin closes. Tools: list_tables, describe_table,\n' +
    'schema_context, run_read, explain, impact, propose_write, ticket_status, execute_approved.\n' +
    'A proposed write is held on a ticket and shown in VS Code; approve it there or with `pg-agent approvals approve <id>`.',
  async run(context) {
    const { args, io } = context;
    if (args.positionals.length > 0) {
      throw new AgentError(
        'BAD_INPUT',
        `pg-agent mcp takes no SQL or question (got "${args.text.slice(0, 40)}").`,
        'Tools receive their SQL from the MCP client.',
      );
    }
    const guard = args.options.guard;
    if (guard === true)
      throw new AgentError(
        'BAD_INPUT',
        "--guard needs the guard user's URL.",
        'pg-agent mcp --guard postgresql://USER:PASSWORD@127.0.0.1:6433/DB',
      );
    const budget = parseBudget(args.options.budget);
    const toolContext =
      typeof guard === 'string'
        ? await guardToolContext(context, guard, budget)
        : await buildToolContext(context, budget);
    // A bad --db or --connection fails now (exit 2), not at the first tool call; nothing connects yet.
    const connection = await toolContext.connectionKey();
    const server = createMcpServer(toolContext, VERSION);
    // The client names itself: shown to the person who approves, one short line.
    toolContext.proposedBy = () =>
      `agent via MCP${toolContext.guard ? ' through the guard' : ''} (${(server.server.getClientVersion()?.name ?? 'unknown client').replace(/\s+/g, ' ').slice(0, 60)})`;
    const closed = new Promise<void>((resolve) => {
      server.server.onclose = resolve;
    });
    const stop = () => void server.close();
    process.stdin.once('end', stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await server.connect(new StdioServerTransport());
    // The password-free key, never the --db URL (which may hold a password).
    context.logger.info('MCP server ready on stdio', { workspace: args.flags.workspace, connection });
    io.stderr(`pg-agent mcp: serving ${VERSION} on stdio (stop with Ctrl+D or by closing stdin)\n`);
    try {
      await closed;
    } finally {
      process.stdin.off('end', stop);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    return EXIT.ok;
  },
};

/** The command's lazily opened database, store and schema, shared by every tool call (each opened once). */
async function buildToolContext(context: CommandContext, budget: number): Promise<McpToolContext> {
  const { args, io } = context;
  // Warnings (a workspace asking to loosen) go to stderr now; executions read the policy again each time.
  const settings = await cliSafety(context, 'mcp');
  const openDb = once(context.openDb);
  let schemaCacheOpened: Promise<unknown> | undefined;
  return {
    openDb,
    connectionKey: once(context.connectionKey),
    openTicketStore: once(context.openTicketStore),
    // The runner opens the database and the schema cache on first use: the first load goes alone.
    loadSchema: async () => {
      await openDb();
      if (!schemaCacheOpened) {
        const first = context.loadSchema();
        schemaCacheOpened = first.catch(() => {
          schemaCacheOpened = undefined;
        });
        return first;
      }
      await schemaCacheOpened;
      return context.loadSchema();
    },
    loadTable: async (schema, name) => {
      await openDb();
      return context.loadTable(schema, name);
    },
    loadContext: async (question, options) => {
      // The first load goes alone (as above); then the stored linking index serves every call.
      if (!schemaCacheOpened) {
        const first = context.loadSchema();
        schemaCacheOpened = first.catch(() => {
          schemaCacheOpened = undefined;
        });
        await first;
      } else await schemaCacheOpened;
      return context.loadContext(question, options);
    },
    settings,
    workspaceDir: args.flags.workspace,
    contextBudget: budget,
    proposedBy: () => 'agent via MCP',
    executedBy: io.env.USER ?? 'pg-agent',
    logger: context.logger,
  };
}

/**
 * `--guard URL` (issue 24 item 3, the broker): the tool context when the server reaches the database only through
 * `pg-agent guard`. The URL names a guard user (its password is the guard's, never the database's); reads and the
 * schema go through the guard like any client's; there is no ticket store here (the guard holds the tickets, the
 * policy and the ledger), and --db, --connection and DATABASE_URL are not used.
 */
async function guardToolContext(context: CommandContext, guardUrl: string, budget: number): Promise<McpToolContext> {
  const { args, io } = context;
  if (args.flags.db !== undefined || args.flags.connection !== undefined) {
    throw new AgentError(
      'BAD_INPUT',
      'pg-agent mcp --guard takes no --db or --connection: the guard is its only way to the database.',
      "Give the guard user's URL to --guard alone.",
    );
  }
  let target;
  try {
    target = parseConnectionUrl(guardUrl);
  } catch (error) {
    throw new AgentError(
      'BAD_INPUT',
      `--guard "${guardUrl.replace(/:[^:@/]*@/, ':…@')}" is not a postgresql:// URL.`,
      'Use the URL `pg-agent guard users add NAME` printed.',
      { cause: error },
    );
  }
  const paths = workspacePaths(args.flags.workspace);
  const key = connectionKey(target, paths.sampleDb);
  let db: Promise<Db> | undefined;
  const openDb = () => {
    db ??= openPostgres(target, context.connectOptions()).catch((error: unknown) => {
      db = undefined;
      throw error;
    });
    return db;
  };
  let cache: ReturnType<typeof openSchemaCache> | undefined;
  return {
    openDb,
    connectionKey: () => Promise.resolve(key),
    openTicketStore: () =>
      Promise.reject(
        new AgentError(
          'BAD_INPUT',
          'pg-agent mcp --guard holds no ticket store: the guard keeps the tickets.',
          "A person decides them where the guard's tickets are (its workspace or REDIS_URL).",
        ),
      ),
    loadSchema: async () => {
      cache ??= openSchemaCache({ dir: paths.schemaCache, logger: context.logger });
      return (await (await cache).cache.get(await openDb(), key)).snapshot;
    },
    loadTable: async (schema, name) => {
      cache ??= openSchemaCache({ dir: paths.schemaCache, logger: context.logger });
      return (await cache).cache.tableSnapshot(await openDb(), key, schema, name);
    },
    settings: await cliSafety(context, 'mcp'),
    workspaceDir: args.flags.workspace,
    contextBudget: budget,
    proposedBy: () => 'agent via MCP through the guard',
    executedBy: io.env.USER ?? 'pg-agent',
    logger: context.logger,
    guard: { url: guardUrl, label: key, sent: new Map() },
  };
}

/** Concurrent first calls share one open; a failed open (server down) is tried again next call. */
function once<T>(open: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= open().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
