/**
 * `pg-agent mcp --guard URL` (issue 24 item 3, the broker): the tool context when the MCP server reaches the
 * database only through `pg-agent guard`. The URL names a guard user (its password is the guard's, never the
 * database's); reads and the schema go through the guard like any client's; there is no ticket store here
 * (the guard holds the tickets, the policy and the ledger), and --db, --connection and DATABASE_URL are not used.
 */
import { openSchemaCache } from '../../core/db/schemaCache';
import { connectionKey, parseConnectionUrl } from '../../core/db/connectionTarget';
import type { Db } from '../../core/db/db';
import { openPostgres } from '../../core/db/postgresDb';
import { workspacePaths } from '../../core/config/workspace';
import { AgentError } from '../../core/platform/errors';
import type { McpToolContext } from '../../mcp/toolContext';
import type { CommandContext } from '../command';
import { cliSafety } from '../sqlInput';

export async function guardToolContext(context: CommandContext, guardUrl: string, budget: number): Promise<McpToolContext> {
  const { args, io } = context;
  if (args.flags.db !== undefined || args.flags.connection !== undefined) {
    throw new AgentError('BAD_INPUT', 'pg-agent mcp --guard takes no --db or --connection: the guard is its only way to the database.', 'Give the guard user\'s URL to --guard alone.');
  }
  let target;
  try {
    target = parseConnectionUrl(guardUrl);
  } catch (error) {
    throw new AgentError('BAD_INPUT', `--guard "${guardUrl.replace(/:[^:@/]*@/, ':…@')}" is not a postgresql:// URL.`, 'Use the URL `pg-agent guard users add NAME` printed.', { cause: error });
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
      Promise.reject(new AgentError('BAD_INPUT', 'pg-agent mcp --guard holds no ticket store: the guard keeps the tickets.', 'A person decides them where the guard\'s tickets are (its workspace or REDIS_URL).')),
    loadSchema: async () => {
      cache ??= openSchemaCache({ dir: paths.schemaCache, logger: context.logger });
      return (await (await cache).cache.get(await openDb(), key)).snapshot;
    },
    settings: await cliSafety(context),
    workspaceDir: args.flags.workspace,
    contextBudget: budget,
    proposedBy: () => 'agent via MCP through the guard',
    executedBy: io.env.USER ?? 'pg-agent',
    logger: context.logger,
    invalidateSchema: async () => {
      if (cache) await (await cache).cache.invalidate(key);
    },
    guard: { url: guardUrl, label: key, sent: new Map() },
  };
}
