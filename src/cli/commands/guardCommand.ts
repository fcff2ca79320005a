/**
 * `pg-agent guard`: a PostgreSQL endpoint in front of one database (SPEC §5 8, §6). Any client (psql, an
 * ORM, a migration tool, an agent's shell) connects to it with guard credentials; reads pass, everything
 * else waits on a ticket for a person. `guard users add NAME` makes a guard user and prints its connection
 * URL once; `guard status` shows the running guard's clients and what they wait for.
 */
import { readFile } from 'node:fs/promises';
import type { ServerTarget } from '../../core/db/connectionTarget';
import { describeTarget } from '../../core/db/connectionTarget';
import { AgentError, toAgentError } from '../../core/platform/errors';
import type { GuardContext } from '../../guard/guardContext';
import { startGuard } from '../../guard/guardServer';
import { RepeatedReads } from '../../guard/metrics/repeatedReads';
import { POOL_FLAGS_HELP, poolFlags } from '../../guard/pool/poolFlags';
import { UpstreamPool } from '../../guard/pool/upstreamPool';
import {
  guardStatusText,
  heldByGuard,
  readGuardStatuses,
  removeDeadGuardStatuses,
  removeGuardStatus,
  writeGuardStatus,
} from '../../guard/guardStatus';
import { guardRoleOf, GuardUsers } from '../../guard/guardUsers';
import { throttle } from '../../shared/throttle';
import type { CliCommand, CommandContext } from '../command';
import { EXIT } from '../exitCodes';
import type { ExitCode } from '../exitCodes';
import { cliSafety } from '../sqlInput';
import { guardOperation, OPERATE_HELP, OPERATE_OPTIONS } from './guardOperate';

const DEFAULT_LISTEN = '127.0.0.1:6433';
const DEFAULT_WAIT_SECONDS = 300;
/** How stale `guard status` may be about its clients: what it saves is a write per client arriving or leaving. */
const STATUS_INTERVAL_MS = 100;

export const guardCommand: CliCommand = {
  name: 'guard',
  summary: 'a PostgreSQL endpoint in front of one database: reads pass, writes wait for an approved ticket',
  usage:
    'pg-agent guard [--listen HOST:PORT] [--hold now|wait[=SECONDS]] [--pool session|transaction [--pool-size N]] [--tls-cert FILE --tls-key FILE] [--metrics HOST:PORT] [--log-format text|json] [--log-file FILE] [--db URL] [--workspace DIR] | guard users add NAME [--role approver] | guard users list | guard status',
  options: {
    listen: { type: 'string' },
    hold: { type: 'string' },
    pool: { type: 'string' },
    'pool-size': { type: 'string' },
    'pool-timeout': { type: 'string' },
    role: { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    ...OPERATE_OPTIONS,
  },
  optionsHelp: `  --listen HOST:PORT  where clients connect (default ${DEFAULT_LISTEN})
  --hold now|wait[=SECONDS]  now (default): a held statement is answered PA001 at once; wait: its client waits
                      for the decision (default ${DEFAULT_WAIT_SECONDS} s), then it runs once, or PA002 / PA001
${POOL_FLAGS_HELP}
  --tls-cert FILE     PEM certificate for clients that ask for TLS (with --tls-key)
  --tls-key FILE      PEM private key of --tls-cert
  --role client|approver  guard users add: client (default) sees only its own held tickets through
                      pg_agent.tickets(); approver sees every ticket of the guard's database
${OPERATE_HELP}`,
  description:
    'Clients authenticate with guard users (SCRAM-SHA-256); the database credentials (--db, DATABASE_URL, PG*) stay in the guard.\n' +
    'A statement that is not a read gets ErrorResponse SQLSTATE PA001 naming its ticket; approve it\n' +
    '(pg-agent approvals approve <id>, or VS Code) and send the identical statement again: it runs once.\n' +
    'PA002: refused by the guard; PA003: the guard could not judge or run it. Nothing ran in any of them.',
  async run(context) {
    const [action, sub, name, ...extra] = context.args.positionals;
    if (action === undefined) return serve(context);
    if (action === 'status' && sub === undefined) return status(context);
    if (action === 'users' && sub === 'add' && name !== undefined && extra.length === 0) return addUser(context, name);
    if (action === 'users' && sub === 'list' && name === undefined) {
      const users = await GuardUsers.inWorkspace(context.args.flags.workspace).list();
      context.io.stdout(
        context.args.flags.json
          ? `${JSON.stringify(users.map((u) => u.user))}\n`
          : users.length
            ? `${users.map((u) => (u.role === 'approver' ? `${u.user} (approver)` : u.user)).join('\n')}\n`
            : 'No guard users yet: pg-agent guard users add NAME\n',
      );
      return EXIT.ok;
    }
    throw new AgentError(
      'BAD_INPUT',
      `pg-agent guard: unknown action "${context.args.positionals.join(' ')}".`,
      'Use: guard, guard users add NAME, guard users list, guard status.',
    );
  },
};

/** `--hold`: undefined (answer PA001 at once) or how long a held statement keeps its client waiting. */
function holdWait(value: string | boolean | undefined): number | undefined {
  if (value === undefined || value === 'now') return undefined;
  const match = typeof value === 'string' ? /^wait(?:=(\d{1,7}))?$/.exec(value) : null;
  const seconds = match ? Number(match[1] ?? DEFAULT_WAIT_SECONDS) : 0;
  if (!match || seconds < 1)
    throw new AgentError(
      'BAD_INPUT',
      `--hold "${String(value)}" is not now, wait or wait=SECONDS.`,
      'For example --hold wait=600 (seconds, at least 1).',
    );
  return seconds;
}

function listenAddress(value: string | boolean | undefined): { host: string; port: number } {
  const text = typeof value === 'string' ? value : DEFAULT_LISTEN;
  const match = /^(?:\[?([^\]]*)\]?:)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port < 0 || port > 65535)
    throw new AgentError('BAD_INPUT', `--listen "${text}" is not HOST:PORT.`, `For example ${DEFAULT_LISTEN}.`);
  return { host: match[1] || '127.0.0.1', port };
}

async function serverTarget(context: CommandContext): Promise<ServerTarget> {
  const target = await context.target();
  if (target.kind !== 'server') {
    throw new AgentError(
      'BAD_INPUT',
      'The guard stands in front of a PostgreSQL server, not the embedded sample database.',
      'Give it one with --db postgres://… (or DATABASE_URL / PG* variables).',
    );
  }
  return target;
}

async function addUser(context: CommandContext, name: string): Promise<ExitCode> {
  const { args, io } = context;
  const role = guardRoleOf(args.options.role);
  const password = await GuardUsers.inWorkspace(args.flags.workspace).add(name, role);
  const target = await serverTarget(context).catch(() => undefined);
  const { host, port } = listenAddress(args.options.listen);
  const url = `postgresql://${name}:${password}@${host.includes(':') ? `[${host}]` : host}:${port}/${encodeURIComponent(target?.database ?? 'DATABASE')}`;
  if (args.flags.json) io.stdout(`${JSON.stringify({ user: name, url, role })}\n`);
  else
    io.stdout(
      `Guard user ${name} added${role === 'approver' ? ' as an approver (it sees every held ticket)' : ''}. Its connection URL (shown once; the guard keeps only a SCRAM verifier):\n${url}\n`,
    );
  return EXIT.ok;
}

async function status(context: CommandContext): Promise<ExitCode> {
  const { args, io } = context;
  // Every guard of this workspace (a window's and a terminal's may both run), the most recent running one first.
  const found = await readGuardStatuses(args.flags.workspace);
  // Held statements and transactions of each running guard come from the ticket store, as they are now. The
  // store is opened once: two guards asking at once opened two (a Redis one was never closed, and status hung).
  const opened = found.some((f) => f.running) ? context.openTicketStore() : undefined;
  const listed = await Promise.all(
    found.map(async ({ status, running }) => ({
      status,
      held:
        running && opened
          ? await opened
              .then((store) => heldByGuard(store, status))
              .catch((error: unknown) => ({ error: toAgentError(error).message }))
          : undefined,
    })),
  );
  const running = listed.flatMap((f) => (f.held ? [{ status: f.status, held: f.held }] : []));
  if (args.flags.json) {
    const guards = listed.map((f) => ({
      running: f.held !== undefined,
      ...f.status,
      ...(f.held && 'error' in f.held ? { heldError: f.held.error } : f.held),
    }));
    // The first guard's fields at the top, as when one guard ran per workspace; `guards` lists them all.
    io.stdout(`${JSON.stringify(guards[0] ? { ...guards[0], guards } : { running: false, guards })}\n`);
    return running.length > 0 ? EXIT.ok : EXIT.failed;
  }
  if (running.length === 0) {
    io.stdout(
      found[0]
        ? `No guard runs (the last one, pid ${found[0].status.pid}, stopped without cleaning up).\n`
        : 'No guard runs for this workspace.\n',
    );
    return EXIT.failed;
  }
  io.stdout(running.map((f) => guardStatusText(f.status, f.held)).join('\n'));
  return EXIT.ok;
}

async function serve(context: CommandContext): Promise<ExitCode> {
  const { args, io } = context;
  const upstream = await serverTarget(context);
  const { host, port } = listenAddress(args.options.listen);
  const waitSeconds = holdWait(args.options.hold);
  const pooling = poolFlags(args.options.pool, args.options['pool-size'], args.options['pool-timeout']);
  const certFile = args.options['tls-cert'];
  const keyFile = args.options['tls-key'];
  if ((typeof certFile === 'string') !== (typeof keyFile === 'string'))
    throw new AgentError('BAD_INPUT', '--tls-cert and --tls-key go together.');
  const tls =
    typeof certFile === 'string' && typeof keyFile === 'string'
      ? { cert: toArrayBuffer(await readFile(certFile)), key: toArrayBuffer(await readFile(keyFile)) }
      : undefined;
  const operation = guardOperation(context);
  const settings = await cliSafety(context, 'guard');
  const db = await context.openDb();
  const workspaceDir = args.flags.workspace;
  const history = settings.history;
  const passedReads = history ? new RepeatedReads((run) => history.record(db.label, run)) : undefined;
  const guardContext: GuardContext = {
    upstream,
    openDb: () => Promise.resolve(db),
    connectionKey: context.connectionKey,
    openTicketStore: context.openTicketStore,
    settings,
    workspaceDir,
    executedBy: `pg-agent guard (${io.env.USER ?? 'guard'})`,
    logger: operation.logger,
    ...(passedReads ? { passedRead: (sql: string, user: string) => passedReads.passed(sql, user) } : {}),
    ...(waitSeconds !== undefined ? { holdWaitSeconds: waitSeconds } : {}),
  };
  const pool =
    pooling.mode === 'transaction'
      ? new UpstreamPool(upstream, { size: pooling.size, waitMs: pooling.waitMs, logger: context.logger })
      : undefined;
  // The store opens now: a broken REDIS_URL fails at start, not at the first held statement.
  await context.openTicketStore();
  const guard = await startGuard({
    context: guardContext,
    db,
    users: GuardUsers.inWorkspace(workspaceDir),
    host,
    port,
    ...(tls ? { tls } : {}),
    ...(pool ? { pool } : {}),
    ...(operation.events ? { events: operation.events } : {}),
  });
  const metricsUrl = await operation.serveMetrics({
    clients: () => guard.clients().length,
    // In a transaction pool the upstream sessions are the pool's, not one per client.
    upstreamSessions: () => (pool ? pool.stats().inUse : guard.upstreamSessions()),
  });
  const listen = `postgresql://${guard.host.includes(':') ? `[${guard.host}]` : guard.host}:${guard.port}/${upstream.database}`;
  const startedAt = new Date().toISOString();
  const connection = await context.connectionKey();
  // Status files of guards that died here (SIGKILL, a crash) go first; this guard's own is status-<pid>.json.
  let writing = removeDeadGuardStatuses(workspaceDir).catch((error: unknown) =>
    operation.logger.warn('could not remove the status files of dead guards', { error: String(error) }),
  );
  // Each client that connects or leaves changes the file: at most one write per STATUS_INTERVAL_MS, with the clients
  // of that moment (the last change is never dropped). A write a change, for 64 clients connecting at once, was 64
  // synchronous writes of a growing file in the event loop every client's bytes wait on.
  const status = throttle(() => {
    writing = writing
      .then(() =>
        writeGuardStatus(workspaceDir, {
          pid: process.pid,
          listen,
          upstream: describeTarget(upstream),
          startedAt,
          clients: guard.clients(),
          connection,
        }),
      )
      .catch((error: unknown) =>
        operation.logger.warn('could not write the guard status file', { error: String(error) }),
      );
  }, STATUS_INTERVAL_MS);
  guard.onChange(() => status.request());
  status.request();
  operation.say(
    `pg-agent guard: ${listen} in front of ${describeTarget(upstream)}${tls ? ' (TLS offered)' : ''}${waitSeconds !== undefined ? `; held statements wait up to ${waitSeconds} s` : ''}${pooling.mode === 'transaction' ? `; transaction pool of ${pooling.size} upstream sessions` : ''}${metricsUrl ? `; metrics at ${metricsUrl}` : ''}; stop with Ctrl+C`,
    { listen, ...(metricsUrl ? { metrics: metricsUrl } : {}) },
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  operation.say('pg-agent guard: stopping');
  await guard.close();
  status.dispose();
  passedReads?.flush();
  pool?.close();
  await operation.close();
  await writing;
  await removeGuardStatus(workspaceDir, process.pid);
  return EXIT.ok;
}

function toArrayBuffer(buffer: Buffer): ArrayBuffer {
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
}
