/**
 * "Test Connection", step by step: the SSH tunnel (when there is one), reaching the server, TLS, the
 * login, and a read; each step says what it found, and the first that fails says why, so a person knows
 * which part of the connection to fix.
 */
import type { ErrorInfo } from '../../shared/errorCodes';
import { toAgentError } from '../platform/errors';
import type { ServerTarget } from './connectionTarget';
import type { PostgresOptions } from './postgresDb';
import { openPostgres } from './postgresDb';
import { acquireTunnel } from './tunnel/sshTunnel';

export type ConnectionStep = 'tunnel' | 'server' | 'tls' | 'login' | 'read';

export interface StepResult {
  step: ConnectionStep;
  ok: boolean;
  detail: string;
  error?: ErrorInfo;
}

export const STEP_TITLES: Record<ConnectionStep, string> = {
  tunnel: 'SSH tunnel',
  server: 'Reach the server',
  tls: 'TLS',
  login: 'Log in',
  read: 'Read',
};

/** Which step an error of opening the connection belongs to. */
function failedStep(code: string): ConnectionStep {
  if (code.startsWith('SSH_')) return 'tunnel';
  if (code.startsWith('DB_SSL_')) return 'tls';
  if (['DB_AUTH_FAILED', 'DB_ROLE_NOT_FOUND', 'DB_NOT_FOUND', 'DB_TOKEN_FAILED'].includes(code)) return 'login';
  return 'server';
}

const ORDER: readonly ConnectionStep[] = ['tunnel', 'server', 'tls', 'login', 'read'];

export async function testConnection(
  target: ServerTarget,
  options: PostgresOptions,
  onStep: (result: StepResult) => void = () => undefined,
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  const report = (result: StepResult) => {
    results.push(result);
    onStep(result);
  };
  // The tunnel first, on its own, so its failure is told apart from the server's.
  const lease =
    target.ssh && options.ssh
      ? acquireTunnel(target.ssh, { ...options.ssh, env: options.env ?? process.env, logger: options.logger })
      : undefined;
  try {
    if (lease) {
      try {
        await lease.tunnel.open();
        report({ step: 'tunnel', ok: true, detail: `up through ${lease.tunnel.route}` });
      } catch (error) {
        report({ step: 'tunnel', ok: false, detail: 'failed', error: toAgentError(error).toInfo() });
        return results;
      }
    }
    let db;
    try {
      db = await openPostgres(target, options);
    } catch (error) {
      const info = toAgentError(error).toInfo();
      const failed = failedStep(info.code);
      for (const step of ORDER.slice(ORDER.indexOf('server'), ORDER.indexOf(failed))) {
        if (step === 'tls' && target.sslmode === 'disable') continue;
        report({
          step,
          ok: true,
          detail: step === 'server' ? `${target.host}:${target.port} answered` : 'the certificate was accepted',
        });
      }
      report({ step: failed, ok: false, detail: 'failed', error: info });
      return results;
    }
    try {
      report({ step: 'server', ok: true, detail: `${target.host}:${target.port} answered` });
      const { rows } = await db.query<{
        who: string;
        db: string;
        version: string;
        ssl: boolean | null;
        tls: string | null;
      }>(
        "SELECT current_user AS who, current_database() AS db, current_setting('server_version') AS version, s.ssl, s.version AS tls FROM pg_stat_ssl s WHERE s.pid = pg_backend_pid()",
      );
      const row = rows[0];
      if (target.sslmode !== 'disable' || row?.ssl) {
        report({
          step: 'tls',
          ok: true,
          detail: row?.ssl
            ? `${row.tls ?? 'TLS'}, sslmode=${target.sslmode}`
            : `not encrypted (the server offers no TLS; sslmode=${target.sslmode})`,
        });
      }
      report({
        step: 'login',
        ok: true,
        detail: `as ${row?.who ?? target.user}${target.iam ? ' with an IAM token' : ''}`,
      });
      report({
        step: 'read',
        ok: true,
        detail: `database ${row?.db ?? target.database}, PostgreSQL ${row?.version ?? '?'}`,
      });
    } catch (error) {
      report({ step: 'read', ok: false, detail: 'failed', error: toAgentError(error).toInfo() });
    } finally {
      await db.close();
    }
    return results;
  } finally {
    lease?.release();
  }
}
