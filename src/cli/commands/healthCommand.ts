/** `pg-agent health`: what a DBA checks first, each check read-only with its thresholds, evidence and a fix as SQL. */
import { HEALTH_CHECKS, runHealth } from '../../core/dba/runHealth';
import { DEFAULT_CATALOG_LIMITS } from '../../core/dba/catalogRead';
import { MAX_FINDINGS } from '../../core/dba/healthTypes';
import { AgentError } from '../../core/platform/errors';
import { renderHealth } from '../../core/present/renderHealth';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { parseLimit } from './topCommand';

export const healthCommand: CliCommand = {
  name: 'health',
  summary: 'what a DBA checks first: indexes, bloat, vacuum, wraparound, sequences, sessions, slots, FK indexes, cache',
  usage: 'pg-agent health [--check ID[,ID…]] [--limit N] [flags]',
  options: { check: { type: 'string' }, limit: { type: 'string' } },
  optionsHelp:
    `  --check IDS         only these checks (comma-separated): ${HEALTH_CHECKS.map((c) => c.id).join(', ')}\n` +
    `  --limit N           findings listed per check, the worst first (default ${MAX_FINDINGS}); the rest are counted`,
  description:
    'Every check is a read-only catalog or statistics query with a statement timeout (--timeout-ms, default 5000 per check).\n' +
    'A check that cannot run (privilege, timeout) says why; the others still run. Each fix is SQL you can send to\n' +
    '`pg-agent sql`, where it is a held write with its impact like any other.',
  async run({ args, io, openDb }) {
    const only =
      typeof args.options.check === 'string'
        ? args.options.check
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : undefined;
    const unknown = only?.filter((id) => !HEALTH_CHECKS.some((c) => c.id === id)) ?? [];
    if (unknown.length > 0) {
      throw new AgentError(
        'BAD_INPUT',
        `Unknown check: ${unknown.join(', ')}.`,
        `Known checks: ${HEALTH_CHECKS.map((c) => c.id).join(', ')}.`,
      );
    }
    const maxFindings = parseLimit(args.options.limit, MAX_FINDINGS);
    const db = await openDb();
    const report = await runHealth(db, {
      ...(only ? { only } : {}),
      maxFindings,
      limits: {
        ...DEFAULT_CATALOG_LIMITS,
        ...(args.flags.timeoutMs !== undefined ? { statementTimeoutMs: args.flags.timeoutMs } : {}),
      },
      onProgress: args.flags.verbose ? (message) => io.stderr(`${message}\n`) : undefined,
    });
    io.stdout(args.flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderHealth(report)}\n`);
    return EXIT.ok;
  },
};
