/**
 * `pg-agent guard`'s flags for its operator: `--metrics HOST:PORT` (Prometheus text at GET /metrics),
 * `--log-format text|json` and `--log-file FILE` (the guard's log, and a line per client session and per
 * statement: guard/metrics/guardEvents.ts).
 */
import { AgentError } from '../../core/platform/errors';
import type { Logger } from '../../core/platform/logger';
import { GuardEvents } from '../../guard/metrics/guardEvents';
import type { LogSink } from '../../guard/metrics/guardLog';
import { fileSink, streamSink } from '../../guard/metrics/guardLog';
import type { LogFormat } from '../../core/platform/logger';
import { jsonLine, lineLogger } from '../../core/platform/logger';
import type { GuardGauges } from '../../guard/metrics/guardMetrics';
import { GuardMetrics } from '../../guard/metrics/guardMetrics';
import type { MetricsEndpoint } from '../../guard/metrics/metricsServer';
import { serveMetrics } from '../../guard/metrics/metricsServer';
import type { CommandContext } from '../command';

export const OPERATE_OPTIONS = {
  metrics: { type: 'string' },
  'log-format': { type: 'string' },
  'log-file': { type: 'string' },
} as const;

export const OPERATE_HELP = `  --metrics HOST:PORT  serve Prometheus metrics at http://HOST:PORT/metrics (clients, upstream sessions,
                      statements by verdict, their durations, tickets waiting and the oldest one's age)
  --log-format text|json  json: the log as JSON lines, with a line per client session and per statement
                      (client address, guard user, verdict, ticket, duration; never SQL or values)
  --log-file FILE     append the log to FILE (0600) instead of stderr`;

/** HOST:PORT (IPv6 in brackets); the host defaults to loopback. */
export function hostPort(
  value: string | boolean | undefined,
  flag: string,
  example: string,
): { host: string; port: number } {
  const text = typeof value === 'string' ? value : '';
  const match = /^(?:\[?([^\]]*)\]?:)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new AgentError('BAD_INPUT', `${flag} "${text}" is not HOST:PORT.`, `For example ${example}.`);
  return { host: match[1] || '127.0.0.1', port };
}

export interface GuardOperation {
  /** The guard's logger (JSON lines or text, on stderr or in --log-file). */
  logger: Logger;
  /** Undefined when nobody reads them (no --metrics, no JSON log, not --verbose): the hot path stays bare. */
  events: GuardEvents | undefined;
  /** A line about the guard itself (start, stop): text on stderr, or a JSON line where the log goes to stderr. */
  say(text: string, fields?: Record<string, string>): void;
  /** Starts --metrics, if asked, once the guard runs; its URL. */
  serveMetrics(gauges: GuardGauges): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Reads the flags (bad ones: BAD_INPUT before anything starts). */
export function guardOperation(context: CommandContext): GuardOperation {
  const { args, io } = context;
  const format = args.options['log-format'] ?? 'text';
  if (format !== 'text' && format !== 'json')
    throw new AgentError(
      'BAD_INPUT',
      `--log-format "${String(format)}" is not text or json.`,
      'For example --log-format json.',
    );
  const file = args.options['log-file'];
  if (file !== undefined && (typeof file !== 'string' || file === ''))
    throw new AgentError(
      'BAD_INPUT',
      '--log-file needs a file name.',
      'For example --log-file /var/log/pg-agent/guard.log.',
    );
  const metricsAt =
    args.options.metrics !== undefined ? hostPort(args.options.metrics, '--metrics', '127.0.0.1:9187') : undefined;
  const logFormat: LogFormat = format;
  const sink: LogSink = typeof file === 'string' ? fileSink(file) : streamSink((text) => io.stderr(text));
  const verbose = args.flags.verbose;
  const logger =
    logFormat === 'json' || typeof file === 'string'
      ? lineLogger(logFormat, (line) => sink.line(line), verbose)
      : context.logger;
  const json = logFormat === 'json' ? sink : undefined;
  // Counting starts with the guard's first client; the gauges read the guard once it runs.
  let gauges: GuardGauges = { clients: () => 0, upstreamSessions: () => 0 };
  const metrics = metricsAt
    ? new GuardMetrics({ clients: () => gauges.clients(), upstreamSessions: () => gauges.upstreamSessions() }, context)
    : undefined;
  let endpoint: MetricsEndpoint | undefined;
  // The guard's own lines stay on stderr; as JSON when the JSON log is there too (one format per stream).
  const jsonOnStderr = logFormat === 'json' && file === undefined;
  const events =
    metrics || json || verbose
      ? new GuardEvents({ logger, ...(json ? { json } : {}), ...(metrics ? { metrics } : {}) })
      : undefined;
  return {
    logger,
    events,
    say: (text, fields) =>
      io.stderr(jsonOnStderr ? `${jsonLine('info', { event: 'guard', msg: text, ...fields })}\n` : `${text}\n`),
    serveMetrics: async (running) => {
      if (!metricsAt || !metrics) return undefined;
      gauges = running;
      endpoint = await serveMetrics(metrics, metricsAt.host, metricsAt.port);
      return `http://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}/metrics`;
    },
    close: async () => {
      await endpoint?.close();
      await sink.close();
    },
  };
}
