/**
 * libpq's files and TLS against a PostgreSQL started by this test: passwords are required (scram), so a
 * connection that works proves the password from ~/.pgpass or the service was used; TLS is from a test CA.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerTarget } from '../../../../src/core/db/connectionTarget';
import { resolveTarget } from '../../../../src/core/db/connectionTarget';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { testConnection } from '../../../../src/core/db/testConnection';
import { AgentError } from '../../../../src/core/platform/errors';
import { silentLogger } from '../../../../src/core/platform/logger';
import { runPgAgent } from '../../../support/cliHarness';
import { recordingLogger } from '../../../support/recordingLogger';
import type { TestCluster } from '../../../support/testCluster';
import { clusterToolsAvailable, issueCert, makeCa, startTestCluster } from '../../../support/testCluster';
import { sshdAvailable, startTestSshd } from '../../../support/testSshd';
import { execSql } from '../../../support/scratchDatabase';

const tools = clusterToolsAvailable();
if (!tools.available) {
  if (process.env.CI === 'true') throw new Error(`CI=true and the test cluster cannot start: ${tools.reason}`);
  console.warn(`\n!!!!! SKIPPING connectionFiles tests: ${tools.reason}\n`);
}

async function openError(target: ServerTarget, env: Record<string, string>): Promise<AgentError> {
  try {
    const db = await openPostgres(target, { logger: silentLogger, env, connectTimeoutMs: 5000 });
    await db.close();
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error('expected the connection to fail');
}

describe.skipIf(!tools.available)('libpq files and TLS against a test-started cluster', () => {
  let cluster: TestCluster;
  let home: string;
  const base = (): ServerTarget => ({
    kind: 'server',
    host: 'localhost',
    port: cluster.port,
    database: 'postgres',
    user: 'app',
    sslmode: 'disable',
  });

  beforeAll(async () => {
    cluster = await startTestCluster({ serverNames: 'DNS:localhost' });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-home-'));
    const superuser = `postgres://postgres:${encodeURIComponent(cluster.superPassword)}@localhost:${cluster.port}/postgres`;
    await execSql(
      superuser,
      `CREATE ROLE app LOGIN PASSWORD 'app-pass'; CREATE ROLE certuser LOGIN; CREATE ROLE iamuser LOGIN PASSWORD 'signed-token-for-iamuser'; CREATE TABLE marker (v text); INSERT INTO marker VALUES ('from the test cluster'); GRANT SELECT ON marker TO app, certuser, iamuser`,
    );
  }, 60_000);

  afterAll(() => {
    cluster?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('takes the password from the password file (0600), and the server accepts it', async () => {
    const file = path.join(home, 'pgpass');
    fs.writeFileSync(file, `other:*:*:*:nope\nlocalhost:${cluster.port}:*:app:app-pass\n`, { mode: 0o600 });
    const db = await openPostgres(base(), { logger: silentLogger, env: { PGPASSFILE: file, HOME: home } });
    try {
      const { rows } = await db.query<{ user: string; v: string }>('SELECT current_user AS user, v FROM marker');
      expect(rows).toEqual([{ user: 'app', v: 'from the test cluster' }]);
    } finally {
      await db.close();
    }
  });

  it("ignores a password file others can read, with libpq's warning, and the login then fails", async () => {
    const file = path.join(home, 'loose-pgpass');
    fs.writeFileSync(file, `*:*:*:app:app-pass\n`);
    fs.chmodSync(file, 0o644);
    const logger = recordingLogger();
    const error = await openPostgres(base(), {
      logger,
      env: { PGPASSFILE: file, HOME: home },
      connectTimeoutMs: 5000,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('DB_AUTH_FAILED');
    expect(logger.messages().join('\n')).toContain(`password file "${file}" has group or world access`);
  });

  it('--db service=NAME and a URL ?service= resolve through pg_service.conf, the password through ~/.pgpass', async () => {
    fs.writeFileSync(
      path.join(home, '.pg_service.conf'),
      `[prod]\nhost=localhost\nport=${cluster.port}\ndbname=postgres\nuser=app\n`,
    );
    fs.writeFileSync(path.join(home, '.pgpass'), `localhost:${cluster.port}:postgres:app:app-pass\n`, { mode: 0o600 });
    const env = { HOME: home, PGSYSCONFDIR: path.join(home, 'none') };
    const cwd = fs.mkdtempSync(path.join(home, 'ws-'));
    for (const db of ['service=prod', 'postgresql:///?service=prod']) {
      const run = await runPgAgent(['sql', '--db', db, '--json', '--', 'SELECT current_user AS who, v FROM marker'], {
        env,
        cwd,
      });
      expect(run.stderr).not.toContain('WARNING');
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as { rows: unknown[][] };
      expect(out.rows).toEqual([['app', 'from the test cluster']]);
    }
    const bad = await runPgAgent(['sql', '--db', 'service=staging', '--', 'SELECT 1'], { env, cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('No definition of service "staging"');
  });

  it("--db URL without a password logs in with PGPASSWORD, as libpq does (how VS Code launches pg-agent mcp and the guard); the URL's own password wins", async () => {
    const cwd = fs.mkdtempSync(path.join(home, 'ws-'));
    const env = { HOME: home, PGPASSFILE: path.join(home, 'none') };
    const url = `postgres://app@localhost:${cluster.port}/postgres`;
    const run = await runPgAgent(['sql', '--db', url, '--json', '--', 'SELECT current_user AS who, v FROM marker'], {
      env: { ...env, PGPASSWORD: 'app-pass' },
      cwd,
    });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { rows: unknown[][] }).rows).toEqual([['app', 'from the test cluster']]);
    const wrong = await runPgAgent(
      ['sql', '--db', `postgres://app:wrong@localhost:${cluster.port}/postgres`, '--', 'SELECT 1'],
      { env: { ...env, PGPASSWORD: 'app-pass' }, cwd },
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password/i);
  });

  it("verify-full passes with the test CA and the certificate's name; the connection is encrypted", async () => {
    const target: ServerTarget = {
      ...base(),
      password: 'app-pass',
      sslmode: 'verify-full',
      sslrootcert: cluster.ca.caCert,
    };
    const db = await openPostgres(target, { logger: silentLogger, env: { HOME: home } });
    try {
      const { rows } = await db.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(rows).toEqual([{ ssl: true }]);
    } finally {
      await db.close();
    }
  });

  it('verify-full refuses a name the certificate does not have, naming both; verify-ca accepts it', async () => {
    const target: ServerTarget = {
      ...base(),
      host: '127.0.0.1',
      password: 'app-pass',
      sslmode: 'verify-full',
      sslrootcert: cluster.ca.caCert,
    };
    const error = await openError(target, { HOME: home });
    expect(error.code).toBe('DB_SSL_VERIFY_FAILED');
    expect(error.message).toContain('"127.0.0.1"');
    expect(error.message).toContain('DNS:localhost');
    expect(error.advice).toContain('CN=Test CA');
    const db = await openPostgres({ ...target, sslmode: 'verify-ca' }, { logger: silentLogger, env: { HOME: home } });
    await db.close();
  });

  it('refuses a server certificate from another CA, naming the CA it checked against', async () => {
    const other = makeCa(path.join(home, 'other-ca'), 'Other CA');
    const error = await openError(
      { ...base(), password: 'app-pass', sslmode: 'verify-full', sslrootcert: other.caCert },
      { HOME: home },
    );
    expect(error.code).toBe('DB_SSL_VERIFY_FAILED');
    expect(error.message).toContain(other.caCert);
    expect(error.message).toContain('CN=Other CA');
  });

  it('verify-full without any CA file says which file it looked for', async () => {
    const error = await openError({ ...base(), password: 'app-pass', sslmode: 'verify-full' }, { HOME: home });
    expect(error.code).toBe('DB_SSL_VERIFY_FAILED');
    expect(error.message).toContain(path.join(home, '.postgresql', 'root.crt'));
  });

  it('logs in with a client certificate (sslcert/sslkey), and the server saw it', async () => {
    const [cert, key] = issueCert(cluster.ca, 'client-certuser', 'certuser');
    const target: ServerTarget = {
      ...base(),
      user: 'certuser',
      sslmode: 'verify-full',
      sslrootcert: cluster.ca.caCert,
      sslcert: cert,
      sslkey: key,
    };
    const db = await openPostgres(target, { logger: silentLogger, env: { HOME: home } });
    try {
      const { rows } = await db.query<{ dn: string }>(
        'SELECT client_dn AS dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
      );
      expect(rows).toEqual([{ dn: '/CN=certuser' }]);
    } finally {
      await db.close();
    }
    fs.chmodSync(key, 0o644);
    const loose = await openError(target, { HOME: home });
    expect(loose.message).toContain('group or world access');
  });

  it('resolveTarget carries sslrootcert from PGSSLROOTCERT into a keyword string', () => {
    expect(
      resolveTarget({ db: `host=localhost sslmode=verify-full`, env: { PGSSLROOTCERT: cluster.ca.caCert } }),
    ).toMatchObject({ sslrootcert: cluster.ca.caCert, sslmode: 'verify-full' });
  });

  it("an AWS RDS IAM profile logs in with the signer's token as its password; a refused token is named as such", async () => {
    const signed: Record<string, unknown>[] = [];
    let token = 'signed-token-for-iamuser';
    const signer = {
      Signer: class {
        constructor(private readonly options: Record<string, unknown>) {}
        getAuthToken(): Promise<string> {
          signed.push(this.options);
          return Promise.resolve(token);
        }
      },
    };
    const iamTarget: ServerTarget = {
      ...base(),
      user: 'iamuser',
      sslmode: 'verify-full',
      sslrootcert: cluster.ca.caCert,
      iam: { provider: 'aws-rds', region: 'eu-west-1' },
    };
    const iam = { loadModule: () => Promise.resolve(signer) };
    const db = await openPostgres(iamTarget, { logger: silentLogger, env: { HOME: home }, iam });
    try {
      const { rows } = await db.query<{ who: string }>('SELECT current_user AS who');
      expect(rows).toEqual([{ who: 'iamuser' }]);
    } finally {
      await db.close();
    }
    expect(signed).toEqual([{ hostname: 'localhost', port: cluster.port, username: 'iamuser', region: 'eu-west-1' }]);
    token = 'an-expired-token';
    const refused = await openPostgres(iamTarget, {
      logger: silentLogger,
      env: { HOME: home },
      iam,
      connectTimeoutMs: 5000,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(AgentError);
    expect((refused as AgentError).code).toBe('DB_TOKEN_FAILED');
    expect((refused as AgentError).message).toContain('refused the AWS RDS IAM (eu-west-1) token of user "iamuser"');
  });

  it('Test Connection names the step that failed: TLS for another CA, the login for a wrong password', async () => {
    const other = makeCa(path.join(home, 'other-ca-2'), 'Other CA');
    const tls = await testConnection(
      { ...base(), password: 'app-pass', sslmode: 'verify-full', sslrootcert: other.caCert },
      { logger: silentLogger, env: { HOME: home } },
    );
    expect(tls.map((s) => [s.step, s.ok, s.error?.code])).toEqual([
      ['server', true, undefined],
      ['tls', false, 'DB_SSL_VERIFY_FAILED'],
    ]);
    const login = await testConnection(
      { ...base(), password: 'wrong', sslmode: 'verify-full', sslrootcert: cluster.ca.caCert },
      { logger: silentLogger, env: { HOME: home } },
    );
    expect(login.map((s) => [s.step, s.ok, s.error?.code])).toEqual([
      ['server', true, undefined],
      ['tls', true, undefined],
      ['login', false, 'DB_AUTH_FAILED'],
    ]);
    const good = await testConnection(
      { ...base(), password: 'app-pass', sslmode: 'verify-full', sslrootcert: cluster.ca.caCert },
      { logger: silentLogger, env: { HOME: home } },
    );
    expect(good.map((s) => [s.step, s.ok])).toEqual([
      ['server', true],
      ['tls', true],
      ['login', true],
      ['read', true],
    ]);
    expect(good[1]?.detail).toMatch(/^TLSv1\.[23], sslmode=verify-full$/);
  });

  it.skipIf(!sshdAvailable().available)(
    "TLS runs inside an SSH tunnel, verify-full checking the database's own name",
    async () => {
      const sshd = await startTestSshd();
      try {
        const knownHostsFile = path.join(home, 'tls-known-hosts');
        const ssh = { knownHostsFile, confirmHostKey: () => Promise.resolve(true) };
        const tunnel = {
          host: '127.0.0.1',
          port: sshd.port,
          user: sshd.user,
          auth: 'key' as const,
          keyFile: sshd.clientKey.privateKey,
        };
        const target: ServerTarget = {
          ...base(),
          password: 'app-pass',
          sslmode: 'verify-full',
          sslrootcert: cluster.ca.caCert,
          ssh: tunnel,
        };
        const db = await openPostgres(target, { logger: silentLogger, env: { HOME: home }, ssh });
        try {
          const { rows } = await db.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
          expect(rows).toEqual([{ ssl: true }]);
        } finally {
          await db.close();
        }
        const wrongName = await openPostgres(
          { ...target, host: '127.0.0.1' },
          { logger: silentLogger, env: { HOME: home }, ssh, connectTimeoutMs: 5000 },
        ).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((wrongName as AgentError).code).toBe('DB_SSL_VERIFY_FAILED');
        expect((wrongName as AgentError).message).toContain('not for "127.0.0.1"');
      } finally {
        await sshd.stop();
      }
    },
  );
});
