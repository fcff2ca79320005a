// One policy per database, wherever it is reached from (SPEC §5 3a, issue 22 item 3), with the built
// `pg-agent` as separate processes: a policy keyed by one URL governs the same database reached as localhost
// or through another port; the person's own config names a database by identity and governs it from any
// --workspace; a profile (--connection) is matched by what it reaches; a key that cannot be resolved still
// applies (fail closed); a key of another database does not. The refusals are asserted on the rows.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pgAgentProcess } from '../../support/cliProcess';
import { closedPort, queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

/** A plain TCP forwarder on a random loopback port: the same server, reached at another address. */
async function forwarder(to: { host: string; port: number }): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(to);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.runIf(postgresAvailable)('the policy of a database, however it is reached', () => {
  let scratch: ScratchDatabase;
  let other: ScratchDatabase;
  let forward: Awaited<ReturnType<typeof forwarder>>;
  let identity: string;
  let root: string;
  let home: string;
  let workspace: string;

  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const user = decodeURIComponent(server.username) || 'postgres';
  const urlAt = (host: string, port: number, database = scratch.name) =>
    `postgres://${user}@${host}:${port}/${database}`;
  const port = Number(server.port || 5432);

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    other = await createScratchDatabase();
    await execSql(scratch.url, 'CREATE TABLE items (id int PRIMARY KEY)');
    forward = await forwarder({ host: server.hostname, port });
    identity = `${String(await queryValue(scratch.url, 'SELECT system_identifier::text FROM pg_control_system()'))}/${scratch.name}`;
  });
  afterAll(async () => {
    await forward?.close();
    await scratch?.drop();
    await other?.drop();
  });
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgagent-oneplace-'));
    home = join(root, 'home');
    workspace = join(root, 'ws');
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    await execSql(scratch.url, 'TRUNCATE items; INSERT INTO items SELECT generate_series(1, 5)');
    return () => rmSync(root, { recursive: true, force: true });
  });

  const writeJson = (file: string, value: unknown) => {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(value));
  };
  const workspaceConfig = (value: unknown, dir = workspace) => writeJson(join(dir, '.pgagent', 'config.json'), value);
  const ownConfig = (value: unknown) => writeJson(join(home, 'config', 'pg-agent', 'config.json'), value);
  const pgAgent = (argv: string[], dir = workspace) =>
    pgAgentProcess([...argv.slice(0, 1), '--workspace', dir, ...argv.slice(1)], {
      cwd: root,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), USER: 'agent' },
    });
  const count = async () => Number(await queryValue(scratch.url, 'SELECT count(*) FROM items'));

  /** A DELETE held, then approved without a signature, as an agent with a shell can do in default mode. */
  async function approvedUnsigned(target: string[], dir = workspace): Promise<string> {
    const held = await pgAgent(['sql', ...target, '--no-input', '--json', '--', 'DELETE FROM items WHERE id = 1'], dir);
    expect(held.code, held.stderr).toBe(3);
    const id = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
    const approved = await pgAgent(['approvals', 'approve', id], dir);
    expect(approved.code, approved.stderr).toBe(0);
    return id;
  }
  async function expectRefused(id: string, target: string[], dir = workspace): Promise<string> {
    const exec = await pgAgent(['exec', '--ticket', id, ...target], dir);
    expect(exec.code, exec.stderr).toBe(4);
    expect(exec.stderr).toMatch(/requireSignature/);
    expect(await count()).toBe(5);
    return exec.stderr;
  }

  it('applies a policy keyed by the 127.0.0.1 URL when the database is reached as localhost', async () => {
    workspaceConfig({ approval: { connections: { [urlAt('127.0.0.1', port)]: { requireSignature: true } } } });
    const viaLocalhost = ['--db', urlAt('localhost', port)];
    const id = await approvedUnsigned(viaLocalhost);
    await expectRefused(id, viaLocalhost);
  });

  it('applies it when the database is reached through another port (a TCP forwarder)', async () => {
    workspaceConfig({ approval: { connections: { [urlAt('127.0.0.1', port)]: { requireSignature: true } } } });
    const viaForward = ['--db', urlAt('127.0.0.1', forward.port)];
    const id = await approvedUnsigned(viaForward);
    await expectRefused(id, viaForward);
  });

  it("finds the person's own policy by the database's identity with --workspace somewhere else", async () => {
    ownConfig({ approval: { databases: { [identity]: { requireSignature: true } } } });
    const elsewhere = join(root, 'some', 'other', 'dir');
    mkdirSync(elsewhere, { recursive: true });
    const viaForward = ['--db', urlAt('localhost', forward.port)];
    const id = await approvedUnsigned(viaForward, elsewhere);
    const refused = await expectRefused(id, viaForward, elsewhere);
    expect(refused).toContain(`approval.databases["${identity}"]`);
  });

  it('matches a profile (--connection) by the database it reaches', async () => {
    ownConfig({ approval: { connections: { [urlAt('localhost', port)]: { requireSignature: true } } } });
    workspaceConfig({
      connections: [{ name: 'shop', host: '127.0.0.1', port: forward.port, database: scratch.name, user }],
    });
    const viaProfile = ['--connection', 'shop'];
    const id = await approvedUnsigned(viaProfile);
    await expectRefused(id, viaProfile);
  });

  it('applies a key it cannot resolve (nothing listens there): stricter is safe', async () => {
    ownConfig({ approval: { connections: { [urlAt('127.0.0.1', await closedPort())]: { requireSignature: true } } } });
    const direct = ['--db', scratch.url];
    const id = await approvedUnsigned(direct);
    await expectRefused(id, direct);
  });

  it('applies to a statement that runs outside a transaction too (CREATE INDEX CONCURRENTLY): refused, no index', async () => {
    ownConfig({ approval: { databases: { [identity]: { requireSignature: true } } } });
    const viaLocalhost = ['--db', urlAt('localhost', port)];
    const held = await pgAgent([
      'sql',
      ...viaLocalhost,
      '--no-input',
      '--json',
      '--',
      'CREATE INDEX CONCURRENTLY items_policy_idx ON items (id)',
    ]);
    expect(held.code, held.stderr).toBe(3);
    const id = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
    expect((await pgAgent(['approvals', 'approve', id])).code).toBe(0);
    const exec = await pgAgent(['exec', '--ticket', id, ...viaLocalhost]);
    expect(exec.code, exec.stderr).toBe(4);
    expect(
      Number(await queryValue(scratch.url, "SELECT count(*) FROM pg_class WHERE relname = 'items_policy_idx'")),
    ).toBe(0);
  });

  it('does not apply the policy of another database on the same server: the ticket runs', async () => {
    ownConfig({
      approval: {
        connections: { [urlAt('127.0.0.1', port, other.name)]: { requireSignature: true } },
        databases: { [`${identity.split('/')[0] ?? ''}/${other.name}`]: { requireSignature: true } },
      },
    });
    const direct = ['--db', scratch.url];
    const id = await approvedUnsigned(direct);
    const exec = await pgAgent(['exec', '--ticket', id, ...direct]);
    expect(exec.code, exec.stderr).toBe(0);
    expect(await count()).toBe(4);
  });
});
