/**
 * SSH tunnels against an sshd this test starts (its own config, host key and authorized keys), with the
 * machine's PostgreSQL reached only through it: the connection to 5432 belongs to sshd, not to us.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerTarget } from '../../../../src/core/db/connectionTarget';
import { connectionKey, parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import type { SshOptions } from '../../../../src/core/db/postgresDb';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import type { SshTunnelConfig } from '../../../../src/core/db/tunnel/sshConfig';
import { fingerprintOf } from '../../../../src/core/db/tunnel/knownHosts';
import { openTunnelCount } from '../../../../src/core/db/tunnel/sshTunnel';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, postgresAvailable } from '../../../support/services';
import type { TestSshd } from '../../../support/testSshd';
import { makeKey, sshdAvailable, sshKeygenFingerprint, startTestSshd } from '../../../support/testSshd';
import { freePort } from '../../../support/testCluster';
import { runPgAgent } from '../../../support/cliHarness';
import { testConnection } from '../../../../src/core/db/testConnection';
import { rejectionOf } from '../../../support/agentErrors';

const sshd = sshdAvailable();
if (!sshd.available) {
  if (process.env.CI === 'true') throw new Error(`CI=true and the SSH tests cannot run: ${sshd.reason}`);
  console.warn(`\n!!!!! SKIPPING sshTunnel tests: ${sshd.reason}\n`);
}

/** Waits (bounded) for a condition about the outside world; what it checks is asserted after. */
async function until(condition: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

describe.skipIf(!sshd.available || !postgresAvailable)('SSH tunnels through a test-started sshd', () => {
  let server: TestSshd;
  let scratch: ScratchDatabase;
  let knownHosts: string;
  const opened: Db[] = [];
  const prompts: string[] = [];

  const tunnel = (extra: Partial<SshTunnelConfig> = {}): SshTunnelConfig => ({
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    auth: 'key',
    keyFile: server.clientKey.privateKey,
    ...extra,
  });
  const target = (ssh: SshTunnelConfig): ServerTarget => ({
    ...parseConnectionUrl(scratch.url),
    host: '127.0.0.1',
    port: 5432,
    ssh,
    profile: 'behind-bastion',
  });
  const options = (extra: Partial<SshOptions> = {}): SshOptions => ({
    knownHostsFile: knownHosts,
    confirmHostKey: ({ hop, fingerprint }) => {
      prompts.push(`${hop} ${fingerprint}`);
      return Promise.resolve(true);
    },
    ...extra,
  });
  const open = async (ssh: SshTunnelConfig, extra: Partial<SshOptions> = {}): Promise<Db> => {
    const db = await openPostgres(target(ssh), { logger: silentLogger, ssh: options(extra), connectTimeoutMs: 10_000 });
    opened.push(db);
    return db;
  };
  const closeAll = async () => {
    for (const db of opened.splice(0)) await db.close();
  };

  beforeAll(async () => {
    server = await startTestSshd();
    scratch = await createScratchDatabase('pgagent_ssh');
    knownHosts = path.join(server.dir, 'pins', 'known_hosts');
    fs.mkdirSync(path.dirname(knownHosts));
  }, 30_000);

  afterEach(closeAll);

  afterAll(async () => {
    await closeAll();
    await scratch?.drop();
    await server?.stop();
  });

  it('pins the host key on first use (the fingerprint OpenSSH shows), connects and queries through the tunnel', async () => {
    const db = await open(tunnel());
    const { rows } = await db.query<{ port: number; db: string }>(
      'SELECT inet_client_port() AS port, current_database() AS db',
    );
    expect(rows[0]?.db).toBe(scratch.name);
    // The server's client is sshd: the connection to 5432 from that port belongs to an sshd process.
    const owner = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${rows[0]?.port ?? 0} )`], {
      encoding: 'utf8',
    });
    expect(owner).toContain('"sshd"');
    expect(prompts).toEqual([
      `the SSH host ${server.user}@127.0.0.1:${server.port} ${sshKeygenFingerprint(server.hostKey.publicKey)}`,
    ]);
    expect(fs.readFileSync(knownHosts, 'utf8')).toContain(`127.0.0.1:${server.port} ssh-ed25519 `);
    expect(db.tunnel?.state).toBe('up');
    expect(connectionKey(target(tunnel()), '')).toContain('?ssh=');
  });

  it('shares one tunnel between pools of the same route, closed with the last one; nothing left running', async () => {
    const first = await open(tunnel());
    const second = await open(tunnel());
    await Promise.all([
      first.query('SELECT 1'),
      second.query('SELECT 1'),
      second.withSession((s) => s.query('SELECT pg_sleep(0.05)')),
    ]);
    expect(openTunnelCount()).toBe(1);
    await until(() => server.sessions().length === 1);
    expect(server.sessions()).toHaveLength(1);
    await first.close();
    expect((await second.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await second.close();
    opened.length = 0;
    expect(openTunnelCount()).toBe(0);
    await until(() => server.sessions().length === 0);
    expect(server.sessions()).toEqual([]);
  });

  it('goes through jump hosts (ProxyJump) in order, each hop checked', async () => {
    const viaJump = tunnel({
      jumpHosts: [
        { host: '127.0.0.1', port: server.port, user: server.user, auth: 'key', keyFile: server.clientKey.privateKey },
      ],
    });
    const db = await open(viaJump);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await until(() => server.sessions().length === 2);
    expect(server.sessions()).toHaveLength(2);
    expect(db.tunnel?.route).toBe(`${server.user}@127.0.0.1:${server.port} → ${server.user}@127.0.0.1:${server.port}`);
  });

  it('refuses a changed host key, naming the host and both fingerprints', async () => {
    const other = makeKey(server.dir, 'impostor_host');
    const otherBlob = Buffer.from(fs.readFileSync(other.publicKey, 'utf8').split(' ')[1] ?? '', 'base64');
    const pinnedFile = path.join(server.dir, 'pins', 'changed_known_hosts');
    fs.writeFileSync(pinnedFile, `127.0.0.1:${server.port} ssh-ed25519 ${otherBlob.toString('base64')}\n`);
    const error = await rejectionOf(() => open(tunnel(), { knownHostsFile: pinnedFile }));
    expect(error.code).toBe('SSH_HOST_KEY_CHANGED');
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).toContain(fingerprintOf(otherBlob));
    expect(error.message).toContain(sshKeygenFingerprint(server.hostKey.publicKey));
    expect(fs.readFileSync(pinnedFile, 'utf8')).toContain(otherBlob.toString('base64'));
    expect(openTunnelCount()).toBe(0);
  });

  it('refuses an unknown host key when nobody can be asked', async () => {
    const error = await rejectionOf(() =>
      open(tunnel(), { knownHostsFile: path.join(server.dir, 'pins', 'empty_known_hosts'), confirmHostKey: undefined }),
    );
    expect(error.code).toBe('SSH_HOST_KEY_UNKNOWN');
    expect(error.message).toContain(sshKeygenFingerprint(server.hostKey.publicKey));
  });

  it('a key the server does not accept: SSH_AUTH_FAILED naming the hop and the key', async () => {
    const stranger = makeKey(server.dir, 'stranger');
    const error = await rejectionOf(() => open(tunnel({ keyFile: stranger.privateKey })));
    expect(error.code).toBe('SSH_AUTH_FAILED');
    expect(error.message).toContain(`the SSH host ${server.user}@127.0.0.1:${server.port}`);
    expect(error.message).toContain(stranger.privateKey);
    expect(openTunnelCount()).toBe(0);
  });

  it('an encrypted key: the passphrase is asked, a wrong one is said so, the right one connects', async () => {
    const asked: string[] = [];
    const withPassphrase = (answer: string) => ({
      secret: (request: { kind: string; name: string }) => {
        asked.push(`${request.kind} ${request.name}`);
        return Promise.resolve(answer);
      },
    });
    const keyed = tunnel({ keyFile: server.encryptedKey.privateKey });
    const wrong = await rejectionOf(() => open(keyed, withPassphrase('wrong horse')));
    expect(wrong.code).toBe('SSH_AUTH_FAILED');
    expect(wrong.message).toContain(`Wrong passphrase for the key file ${server.encryptedKey.privateKey}`);
    const db = await open(keyed, withPassphrase(server.passphrase));
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(asked).toEqual([
      `passphrase the SSH host ${server.user}@127.0.0.1:${server.port}`,
      `passphrase the SSH host ${server.user}@127.0.0.1:${server.port}`,
    ]);
  });

  it('logs in with ssh-agent (SSH_AUTH_SOCK)', async () => {
    const socket = path.join(server.dir, 'agent.sock');
    const agent = execFileSync('ssh-agent', ['-a', socket, '-s'], { encoding: 'utf8' });
    const agentPid = Number(/SSH_AGENT_PID=(\d+)/.exec(agent)?.[1]);
    try {
      execFileSync('ssh-add', [server.clientKey.privateKey], {
        env: { ...process.env, SSH_AUTH_SOCK: socket },
        stdio: 'pipe',
      });
      const db = await openPostgres(target(tunnel({ auth: 'agent', keyFile: undefined })), {
        logger: silentLogger,
        env: { SSH_AUTH_SOCK: socket },
        ssh: options(),
      });
      opened.push(db);
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      const noAgent = await rejectionOf(() =>
        openPostgres(target(tunnel({ auth: 'agent', keyFile: undefined, user: 'nobody-else' })), {
          logger: silentLogger,
          env: {},
          ssh: options(),
        }),
      );
      expect(noAgent.message).toContain('SSH_AUTH_SOCK is not set');
    } finally {
      process.kill(agentPid, 'SIGTERM');
    }
  });

  it('an unreachable bastion, and a jump host that cannot reach the next hop, each named', async () => {
    const closed = await freePort();
    const error = await rejectionOf(() => open(tunnel({ port: closed })));
    expect(error.code).toBe('SSH_UNREACHABLE');
    expect(error.message).toContain(
      `Cannot reach the SSH host ${server.user}@127.0.0.1:${closed} (connection refused)`,
    );
    const viaJump = tunnel({
      port: closed,
      jumpHosts: [
        { host: '127.0.0.1', port: server.port, user: server.user, auth: 'key', keyFile: server.clientKey.privateKey },
      ],
    });
    const hop = await rejectionOf(() => open(viaJump));
    expect(hop.code).toBe('SSH_UNREACHABLE');
    expect(hop.message).toContain(
      `Cannot reach the SSH host (last hop) ${server.user}@127.0.0.1:${closed} from jump host 1 of 1`,
    );
    expect(openTunnelCount()).toBe(0);
    await until(() => server.sessions().length === 0);
    expect(server.sessions()).toEqual([]);
  });

  it('a host that accepts TCP and never speaks SSH times out, named; a person looking at a host key is not timed', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as net.AddressInfo).port;
    try {
      const error = await rejectionOf(() => open(tunnel({ port: silentPort }), { readyTimeoutMs: 300 }));
      expect(error.code).toBe('SSH_UNREACHABLE');
      expect(error.message).toContain(`the SSH host ${server.user}@127.0.0.1:${silentPort} did not answer in time`);
    } finally {
      silent.close();
    }
    const slowPerson = {
      knownHostsFile: path.join(server.dir, 'pins', 'slow_known_hosts'),
      // The person takes longer than the whole timeout; what comes after the answer has the timeout again.
      readyTimeoutMs: 2000,
      confirmHostKey: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 2500)),
    };
    const db = await open(tunnel(), slowPerson);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('a database the SSH host cannot reach: the tunnel is up, the error names the SSH host and the address', async () => {
    const closed = await freePort();
    const error = await rejectionOf(() =>
      openPostgres(
        { ...target(tunnel()), port: closed },
        { logger: silentLogger, ssh: options(), connectTimeoutMs: 10_000 },
      ),
    );
    expect(error.code).toBe('SSH_TUNNEL_FAILED');
    expect(error.message).toContain(
      `the SSH host ${server.user}@127.0.0.1:${server.port} could not open a connection to the database at 127.0.0.1:${closed}`,
    );
    expect(openTunnelCount()).toBe(0);
  });

  it('a tunnel dropped mid-query fails that query clearly; the next query opens the tunnel again', async () => {
    const db = await open(tunnel());
    await db.query('SELECT 1');
    await until(() => server.sessions().length === 1);
    const [session] = server.sessions();
    const running = db.query('SELECT pg_sleep(30)');
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(session ?? 0, 'SIGKILL');
    const error = await rejectionOf(() => running);
    expect(error.code).toBe('DB_UNREACHABLE');
    expect(error.message).toContain('the SSH tunnel went down');
    expect(error.advice).toContain('Nothing was committed');
    const { rows } = await db.query<{ one: number }>('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
    expect(db.tunnel?.state).toBe('up');
    const [again] = server.sessions();
    expect(again).not.toBe(session);
  });

  it("pg-agent --connection NAME goes through the profile's tunnel: the host key is asked on the terminal once, --no-input refuses an unknown one", async () => {
    const ws = fs.mkdtempSync(path.join(server.dir, 'ws-'));
    const url = new URL(scratch.url);
    const profile = {
      name: 'behind-bastion',
      host: '127.0.0.1',
      port: 5432,
      database: scratch.name,
      user: decodeURIComponent(url.username) || 'postgres',
      ssh: tunnel(),
    };
    fs.mkdirSync(path.join(ws, '.pgagent'));
    fs.writeFileSync(path.join(ws, '.pgagent', 'config.json'), JSON.stringify({ connections: [profile] }));
    const env = { XDG_CONFIG_HOME: path.join(ws, 'xdg') };
    const argv = ['sql', '--connection', 'behind-bastion', '--json', '--', 'SELECT current_database() AS db'];
    const refused = await runPgAgent([...argv.slice(0, 3), '--no-input', ...argv.slice(3)], {
      env,
      cwd: ws,
      answers: [],
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('is not known yet');
    const first = await runPgAgent(argv, { env, cwd: ws, answers: ['y'] });
    expect(first.stderr).toContain(sshKeygenFingerprint(server.hostKey.publicKey));
    expect(first.prompts).toHaveLength(1);
    expect(first.code).toBe(0);
    expect((JSON.parse(first.stdout) as { rows: unknown[][] }).rows).toEqual([[scratch.name]]);
    expect(fs.readFileSync(path.join(ws, 'xdg', 'pg-agent', 'known_hosts'), 'utf8')).toContain(
      `127.0.0.1:${server.port} ssh-ed25519`,
    );
    const again = await runPgAgent(argv, { env, cwd: ws, answers: [] });
    expect(again.prompts).toEqual([]);
    expect(again.code).toBe(0);
    // pg-agent connect: Test Connection in the terminal, step by step.
    const check = await runPgAgent(['connect', '--connection', 'behind-bastion'], { env, cwd: ws });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(`✓ SSH tunnel: up through ${server.user}@127.0.0.1:${server.port}`);
    expect(check.stdout).toContain(`✓ Read: database ${scratch.name}`);
    fs.writeFileSync(
      path.join(ws, '.pgagent', 'config.json'),
      JSON.stringify({
        connections: [{ ...profile, ssh: tunnel({ keyFile: makeKey(server.dir, 'stranger3').privateKey }) }],
      }),
    );
    const bad = await runPgAgent(['connect', '--connection', 'behind-bastion', '--json'], { env, cwd: ws });
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as {
      ok: boolean;
      steps: { step: string; ok: boolean; error?: { code: string } }[];
    };
    expect(report).toMatchObject({
      ok: false,
      steps: [{ step: 'tunnel', ok: false, error: { code: 'SSH_AUTH_FAILED' } }],
    });
    expect(openTunnelCount()).toBe(0);
  });

  it('Test Connection goes step by step: the tunnel, the server, the login, a read; a bad key stops at the tunnel', async () => {
    const steps = await testConnection(target(tunnel()), { logger: silentLogger, ssh: options() });
    expect(steps.map((s) => [s.step, s.ok])).toEqual([
      ['tunnel', true],
      ['server', true],
      ['login', true],
      ['read', true],
    ]);
    expect(steps[0]?.detail).toContain(`${server.user}@127.0.0.1:${server.port}`);
    expect(steps[3]?.detail).toContain(`database ${scratch.name}`);
    const stranger = makeKey(server.dir, 'stranger2');
    const failed = await testConnection(target(tunnel({ keyFile: stranger.privateKey })), {
      logger: silentLogger,
      ssh: options(),
    });
    expect(failed.map((s) => [s.step, s.ok, s.error?.code])).toEqual([['tunnel', false, 'SSH_AUTH_FAILED']]);
    expect(openTunnelCount()).toBe(0);
  });
});
