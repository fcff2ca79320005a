/** The CLI runner: picks the command, parses its flags, opens the database, maps errors to exit codes. */
import type { ConnectionTarget } from '../core/db/connectionTarget';
import { connectionKey, parseConnectionUrl, resolveTarget } from '../core/db/connectionTarget';
import { targetOfTicket } from './ticketTarget';
import { databaseResolver } from '../core/sql/executionResolver';
import { openTicketStore } from '../core/approvals/openTicketStore';
import type { TicketStore } from '../core/approvals/ticketStore';
import type { Db } from '../core/db/db';
import { openDatabase } from '../core/db/openDatabase';
import { openSchemaCache } from '../core/db/openSchemaCache';
import { cachedSchemaContext } from '../core/ask/cachedContext';
import type { SchemaContextOptions } from '../core/ask/schemaContext';
import type { JobCheckpointer } from '../core/jobs/jobCheckpointer';
import { openJobCheckpointer } from '../core/jobs/jobCheckpointer';
import { JobLeases } from '../core/jobs/jobLease';
import { openLeaseBackend } from '../core/jobs/leaseBackends';
import type { SchemaSnapshot } from '../shared/schema';
import type { AgentError } from '../core/platform/errors';
import { toAgentError } from '../core/platform/errors';
import { lineLogger } from '../core/platform/logger';
import { readWorkspaceConfig, workspacePaths } from '../core/config/workspace';
import type { ErrorCode } from '../shared/errorCodes';
import { COMMON_HELP, parseCommandArgs, UsageError } from './args';
import type { ParsedArgs } from './args';
import type { CliCommand, CliIo } from './command';
import { approvalsCommand } from './commands/approvalsCommand';
import { askCommand } from './commands/askCommand';
import { classifyCommand } from './commands/classifyCommand';
import { contextCommand } from './commands/contextCommand';
import { demoCommand } from './commands/demoCommand';
import { execCommand } from './commands/execCommand';
import { healthCommand } from './commands/healthCommand';
import { topCommand } from './commands/topCommand';
import { indexesCommand } from './commands/indexesCommand';
import { impactCommand } from './commands/impactCommand';
import { jobCommand } from './commands/jobCommand';
import { mcpCommand } from './commands/mcpCommand';
import { guardCommand } from './commands/guardCommand';
import { planCommand } from './commands/planCommand';
import { keysCommand } from './commands/keysCommand';
import { policyCommand } from './commands/policyCommand';
import { sqlCommand } from './commands/sqlCommand';
import { schemaCommand } from './commands/schemaCommand';
import { connectCommand } from './commands/connectCommand';
import { quarantineCommand } from './commands/quarantineCommand';
import { undoCommand } from './commands/undoCommand';
import { historyCommand } from './commands/historyCommand';
import { diffCommand } from './commands/diffCommand';
import type { ExitCode } from './exitCodes';
import { EXIT } from './exitCodes';
import { cliSshOptions } from './sshPrompts';
import { VERSION } from './version';
import { visibleText } from '../shared/visibleSql';
import { closest } from './didYouMean';

/** What each exit code means; one meaning each (docs/cli.md says the same). */
export const EXIT_CODES_HELP = `Exit codes:
  0  done
  1  failed at run time (database error, timeout, lock not free); nothing committed
  2  bad input (unknown command or flag, empty or unparsable SQL, bad ticket id)
  3  held for approval, not executed (the ticket and its next steps are printed)
  4  refused (by policy, by the ticket's rules, or rejected by you at the prompt)`;

export const COMMANDS: readonly CliCommand[] = [
  sqlCommand,
  classifyCommand,
  impactCommand,
  contextCommand,
  approvalsCommand,
  execCommand,
  undoCommand,
  quarantineCommand,
  schemaCommand,
  demoCommand,
  askCommand,
  jobCommand,
  planCommand,
  mcpCommand,
  guardCommand,
  keysCommand,
  policyCommand,
  historyCommand,
  diffCommand,
  healthCommand,
  topCommand,
  indexesCommand,
  connectCommand,
];

/** Codes that mean the input (flags, URL, profile name) was wrong rather than the run. */
const BAD_INPUT_CODES: readonly ErrorCode[] = [
  'BAD_INPUT',
  'CONFIG_INVALID',
  'PROFILE_NOT_FOUND',
  'SQL_EMPTY',
  'SQL_SYNTAX',
  'SQL_PLACEHOLDERS',
  'APPROVAL_NOT_FOUND',
  'APPROVAL_CONNECTION_MISMATCH',
];
/** Codes that mean no: policy, or a ticket that does not allow this run (not approved, rejected, spent, expired). */
const REFUSED_CODES: readonly ErrorCode[] = [
  'SQL_REFUSED',
  'APPROVAL_POLICY',
  'APPROVAL_NOT_APPROVED',
  'APPROVAL_REJECTED',
  'APPROVAL_EXPIRED',
  'APPROVAL_ALREADY_USED',
  'APPROVAL_SQL_MISMATCH',
  'APPROVAL_STALE',
];

export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const command = topic === undefined ? undefined : COMMANDS.find((c) => c.name === topic);
    io.stdout(`${command ? commandHelp(command) : mainHelp()}\n`);
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  if (name === '--version') {
    io.stdout(`${VERSION}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const guess = closest(
      name,
      COMMANDS.map((c) => c.name),
    );
    io.stderr(
      `pg-agent: unknown command "${visibleText(name)}"${guess !== undefined ? ` (did you mean "${guess}"?)` : ''}.\nRun "pg-agent --help" for the list of commands.\n`,
    );
    return EXIT.badInput;
  }

  let args: ParsedArgs;
  try {
    args = parseCommandArgs(rest, command.options, io.cwd);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(
      `pg-agent ${command.name}: ${visibleText(error.message)}\nUsage: ${command.usage}\nRun "pg-agent ${command.name} --help" for every flag.\n`,
    );
    return EXIT.badInput;
  }
  if (args.flags.help) {
    io.stdout(`${commandHelp(command)}\n`);
    return EXIT.ok;
  }

  const logger = lineLogger('text', (line) => io.stderr(`${line}\n`), args.flags.verbose);
  const paths = workspacePaths(args.flags.workspace);
  let target: ConnectionTarget | undefined;
  // The database a ticket names (`exec --ticket`): used when no --db or --connection says otherwise.
  let ticketConnection: string | undefined;
  const resolve = async (): Promise<ConnectionTarget> => {
    if (target) return target;
    const config = await readWorkspaceConfig(paths);
    const explicit = args.flags.db !== undefined || args.flags.connection !== undefined;
    target =
      command === demoCommand
        ? { kind: 'sample' }
        : ticketConnection !== undefined && !explicit
          ? targetOfTicket(ticketConnection, { profiles: config.connections, env: io.env, sampleDbDir: paths.sampleDb })
          : resolveTarget({
              ...(args.flags.db !== undefined ? { db: args.flags.db } : {}),
              ...(args.flags.connection !== undefined ? { profile: args.flags.connection } : {}),
              profiles: config.connections,
              env: io.env,
            });
    return target;
  };
  let db: Db | undefined;
  const openDb = async (): Promise<Db> => {
    db ??= await openDatabase(await resolve(), {
      sampleDbDir: paths.sampleDb,
      logger,
      env: io.env,
      ssh: cliSshOptions(io, args.flags.noInput),
      onProgress: (message) => io.stderr(`${message}\n`),
      sampleDbHeldBy: `pg-agent ${command.name}`,
    });
    return db;
  };
  // Other databases a ticket left EXECUTING names, opened only to read its transaction's fate.
  const ticketDbs = new Map<string, Promise<Db | undefined>>();
  const databaseFor = async (connection: string): Promise<Db | undefined> => {
    if (connection === connectionKey(await resolve(), paths.sampleDb)) {
      // The sample database held by another process (a VS Code window) cannot be reached from here.
      return openDb().catch((error: unknown) => {
        logger.debug('cannot open the sample database for a ticket', { error: String(error) });
        return undefined;
      });
    }
    let opened = ticketDbs.get(connection);
    if (!opened) {
      opened = (async () => {
        if (!connection.startsWith('postgres://')) return undefined;
        const target = parseConnectionUrl(connection);
        const password = io.env.PGPASSWORD;
        return openDatabase(
          { ...target, ...(password !== undefined ? { password } : {}) },
          { sampleDbDir: paths.sampleDb, logger, env: io.env, ssh: cliSshOptions(io, args.flags.noInput) },
        );
      })().catch((error: unknown) => {
        logger.debug('cannot open the database of a ticket', { connection, error: String(error) });
        return undefined;
      });
      ticketDbs.set(connection, opened);
    }
    return opened;
  };
  // Opened once per process, also when two steps ask at the same moment (the promise is kept, not its result:
  // a second caller awaiting the first open never opens a second Redis connection that nobody closes).
  let store: Promise<TicketStore> | undefined;
  const openStore = (): Promise<TicketStore> =>
    (store ??= openTicketStore({
      ...(io.env.REDIS_URL ? { redisUrl: io.env.REDIS_URL } : {}),
      ...(io.env.PGAGENT_REDIS_PREFIX ? { prefix: io.env.PGAGENT_REDIS_PREFIX } : {}),
      approvalsDir: paths.approvals,
      logger,
    }).then((opened) => {
      // A ticket left EXECUTING by a dead executor is resolved on every read, from its database.
      opened.setResolver(databaseResolver(databaseFor, logger));
      return opened;
    }));
  let schemaCache: ReturnType<typeof openSchemaCache> | undefined;
  const openCache = (options: { sampleValues?: boolean }) =>
    (schemaCache ??= openSchemaCache({
      ...(io.env.REDIS_URL ? { redisUrl: io.env.REDIS_URL } : {}),
      dir: paths.schemaCache,
      ...(options.sampleValues ? { sampleValues: true } : {}),
      logger,
    }));
  const loadTable = async (schema: string, name: string, options: { sampleValues?: boolean } = {}) => {
    const database = await openDb();
    const opened = await openCache(options);
    return opened.cache.tableSnapshot(database, connectionKey(await resolve(), paths.sampleDb), schema, name);
  };
  const loadSchema = async (options: { sampleValues?: boolean } = {}): Promise<SchemaSnapshot> => {
    const database = await openDb();
    const opened = await openCache(options);
    const { snapshot, source } = await opened.cache.get(database, connectionKey(await resolve(), paths.sampleDb));
    logger.debug('schema loaded', { source });
    return snapshot;
  };
  const loadContext = async (
    question: string,
    options: SchemaContextOptions,
    cache: { sampleValues?: boolean } = {},
  ) => {
    const database = await openDb();
    const opened = await openCache(cache);
    const key = connectionKey(await resolve(), paths.sampleDb);
    return cachedSchemaContext(opened.cache, database, key, question, options);
  };
  const readText = async (): Promise<string> => (args.text === '-' ? io.readStdin() : args.text);
  // Opened once per command, also when a command builds two job runners.
  let checkpointer: Promise<JobCheckpointer> | undefined;
  const jobCheckpointer = (): Promise<JobCheckpointer> =>
    (checkpointer ??= readWorkspaceConfig(paths).then((config) =>
      openJobCheckpointer({ teamDatabaseUrl: config.team?.databaseUrl, checkpointsDir: paths.checkpoints, logger }),
    ));
  let leases: Awaited<ReturnType<typeof openLeaseBackend>> | undefined;
  const openJobLeases = async (): Promise<JobLeases> => {
    leases ??= await openLeaseBackend({
      ...(io.env.REDIS_URL ? { redisUrl: io.env.REDIS_URL } : {}),
      leasesDir: paths.leases,
      logger,
    });
    return new JobLeases(leases.backend, {
      by: `pg-agent ${command.name} ${args.positionals[0] ?? ''}`.trim(),
      logger,
    });
  };

  try {
    return await command.run({
      args,
      io,
      logger,
      openDb,
      connectOptions: () => ({ logger, env: io.env, ssh: cliSshOptions(io, args.flags.noInput) }),
      connectionKey: async () => connectionKey(await resolve(), paths.sampleDb),
      target: resolve,
      // Already resolved (the store resolved another process's EXECUTING ticket on the default database): the
      // claim then compares the ticket's database with it and refuses another one, naming both.
      useTicketDatabase: (connection) => {
        ticketConnection = connection;
      },
      openTicketStore: openStore,
      loadSchema,
      loadTable,
      loadContext,
      readText,
      openJobLeases,
      openJobCheckpointer: jobCheckpointer,
    });
  } catch (error) {
    const e = toAgentError(error);
    if (e.code === 'INTERNAL') logger.error('unexpected failure', { stack: e.stack ?? e.message });
    reportError(e, args, io);
    return BAD_INPUT_CODES.includes(e.code)
      ? EXIT.badInput
      : REFUSED_CODES.includes(e.code)
        ? EXIT.refused
        : EXIT.failed;
  } finally {
    await (await schemaCache?.catch(() => undefined))?.close();
    await leases?.close();
    await (await checkpointer?.catch(() => undefined))?.close();
    await (
      await store?.catch(() => undefined)
    )
      ?.close()
      .catch((error: unknown) => logger.warn('closing the ticket store failed', { error: String(error) }));
    await db?.close().catch((error: unknown) => logger.warn('closing the database failed', { error: String(error) }));
    for (const opened of ticketDbs.values()) await (await opened)?.close().catch(() => undefined);
  }
}

function reportError(error: AgentError, args: ParsedArgs, io: CliIo): void {
  if (args.flags.json) {
    const status = BAD_INPUT_CODES.includes(error.code) ? 'invalid' : 'error';
    const position = 'position' in error && typeof error.position === 'number' ? { position: error.position } : {};
    // The SPEC §6 result shape, empty, so scripts can read every command's failure the same way.
    io.stdout(
      `${JSON.stringify({ status, statements: [], fields: [], rows: [], rowCount: 0, truncated: false, error: { ...error.toInfo(), ...position } })}\n`,
    );
  }
  // Messages can quote the statement or the database: shown, never obeyed by the terminal.
  io.stderr(visibleText(`error: ${error.message}\n${error.advice ? `  ${error.advice}\n` : ''}`));
}

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `pg-agent ${VERSION} — work on PostgreSQL in plain words; every write reviewed before it runs.`,
    '',
    'Usage: pg-agent <command> [flags] [--] <SQL or question>',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    COMMON_HELP,
    '',
    EXIT_CODES_HELP,
    'Run "pg-agent <command> --help" for a command\'s own flags.',
  ].join('\n');
}

export function commandHelp(command: CliCommand): string {
  return [
    `pg-agent ${command.name} — ${command.summary}`,
    '',
    `Usage: ${command.usage}`,
    ...(command.description ? ['', command.description] : []),
    ...(command.optionsHelp ? ['', 'Flags:', command.optionsHelp] : []),
    '',
    COMMON_HELP,
  ].join('\n');
}
