/** What a `pg-agent` command is, and what it gets to run: parsed arguments, the terminal, the database. */
import type { SchemaContext, SchemaContextOptions } from '../core/ask/schemaContext';
import type { TicketStore } from '../core/approvals/ticketStore';
import type { Db } from '../core/db/db';
import type { SchemaSnapshot } from '../shared/schema';
import type { ConnectionTarget, Env } from '../core/db/connectionTarget';
import type { PostgresOptions } from '../core/db/postgresDb';
import type { JobCheckpointer } from '../core/jobs/jobCheckpointer';
import type { JobLeases } from '../core/jobs/jobLease';
import type { Logger } from '../core/platform/logger';
import type { OptionSpec, ParsedArgs } from './args';
import type { ExitCode } from './exitCodes';

/** The terminal, injected so tests run commands in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<string>;
  /** Asks a person a question on the terminal; only present when one can answer. */
  prompt?: (question: string) => Promise<string>;
  /**
   * Asks for a signing key's passphrase on the controlling terminal (/dev/tty), never stdin; refuses when
   * there is none. Left out (in-process runs), signing is refused.
   */
  passphrase?: (question: string) => Promise<string>;
  /** Whether a person can answer prompts (stdin and stdout are terminals). */
  isTTY: boolean;
  env: Env;
  cwd: string;
}

export interface CommandContext {
  args: ParsedArgs;
  io: CliIo;
  logger: Logger;
  /** How this run opens a server: its logger, environment and what an SSH tunnel may ask on the terminal. */
  connectOptions: () => PostgresOptions;
  /** Opens the database the flags name; the caller's runner closes it after the command. */
  openDb: () => Promise<Db>;
  /** Password-free key of that database (tickets are bound to it). */
  connectionKey: () => Promise<string>;
  /** Where the flags point (with the password, when one was given): what `pg-agent guard` connects its clients' sessions to. */
  target: () => Promise<ConnectionTarget>;
  /**
   * Makes the run use the database a ticket was made on (its connection key) unless --db or --connection name
   * one; called before anything opens the database (`exec --ticket`).
   */
  useTicketDatabase: (connection: string) => void;
  /** The approval ticket store: Redis when REDIS_URL is set, else .pgagent/approvals/. Closed by the runner. */
  openTicketStore: () => Promise<TicketStore>;
  /** The database's schema through the schema cache (Redis when REDIS_URL is set, else .pgagent/). */
  loadSchema: (options?: { sampleValues?: boolean }) => Promise<SchemaSnapshot>;
  /** One table through the same cache, reading only it (the snapshot's `tables` holds it, or nothing). */
  loadTable: (schema: string, name: string, options?: { sampleValues?: boolean }) => Promise<SchemaSnapshot>;
  /**
   * The schema context of a question through the same cache, its linking index stored with it (built once per
   * schema version, not per process): what `buildSchemaContext` over loadSchema() gives, without loading it all.
   */
  loadContext: (
    question: string,
    options: SchemaContextOptions,
    cache?: { sampleValues?: boolean },
  ) => Promise<SchemaContext>;
  /** The SQL or question: the positional text, or stdin when it is "-". */
  readText: () => Promise<string>;
  /** One driver per job: leases in Redis when REDIS_URL is set, else .pgagent/leases/. Closed by the runner. */
  openJobLeases: () => Promise<JobLeases>;
  /** Where job checkpoints live: the team database when config.json names one, else .pgagent/checkpoints/. Closed by the runner. */
  openJobCheckpointer: () => Promise<JobCheckpointer>;
}

export interface CliCommand {
  name: string;
  /** One line for the command list. */
  summary: string;
  usage: string;
  /** The command's own flags and their help lines. */
  options: OptionSpec;
  optionsHelp?: string;
  description?: string;
  run(context: CommandContext): Promise<ExitCode>;
}
