/**
 * The broker under another OS user (docs/guard-broker.md; issue 24 item 3), as the systemd unit runs it: the guard
 * runs as `nobody` with its workspace (mode 0700) and DATABASE_URL in its environment only; an "agent" process runs
 * as `daemon` with nothing but a guard user's URL. The agent's write is held; the agent cannot read the guard's
 * store or environment file, nor approve (its `approvals approve` on the guard's workspace fails); a person acting
 * as the guard's user approves, and the agent's identical retry runs once. Then signed mode on top: an approver's
 * key lives (encrypted) in the broker's config; her approval typed on her terminal as the broker's user counts, the
 * broker's user without a terminal cannot approve. Runs only as root (it switches users).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { CLI_PATH } from '../../support/mcpClient';
import { connect, failure } from '../../support/pgClients';
import { readableBy } from '../../support/readableCopy';
import { runTool } from '../../support/toolRun';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

const GUARD_UID = 65534; // nobody
const AGENT_UID = 1; // daemon
const asRoot = process.getuid?.() === 0;
const WRITE = 'UPDATE items SET n = n + 1 WHERE id = 1';
const PTY_RUN = fileURLToPath(new URL('../../support/ptyRun.py', import.meta.url));

/** `command` as the OS user `uid`, in `cwd`, with only PATH and `env`. */
const run = (uid: number, command: string, args: string[], env: Record<string, string>, cwd: string) =>
  runTool(command, args, { uid, env, cwd });

/** `command` under a pseudo-terminal (its controlling terminal); each passphrase prompt gets the next answer. */
async function onTerminal(
  command: string[],
  env: Record<string, string>,
  answers: string[],
): Promise<{ code: number; output: string }> {
  const ran = await run(0, 'python3', [PTY_RUN, JSON.stringify(command), JSON.stringify(answers)], env, tmpdir());
  if (ran.code !== 0) throw new Error(`ptyRun.py failed: ${ran.stderr}`);
  return JSON.parse(ran.stdout) as { code: number; output: string };
}

// The broker (nobody) and the agent (daemon) run what they can read: a clone under /root is out of their reach.
const BROKER = asRoot ? readableBy(GUARD_UID) : undefined;
const AGENT = asRoot ? readableBy(AGENT_UID) : undefined;
const unreachable = BROKER?.unreadable ?? AGENT?.unreadable;
if (unreachable) console.warn(`\n!!!!! SKIPPING the broker-as-another-OS-user tests: ${unreachable}\n`);
const BROKER_CLI = BROKER?.cli ?? CLI_PATH;
const AGENT_CLI = AGENT?.cli ?? CLI_PATH;

describe.skipIf(!postgresAvailable || !asRoot || unreachable !== undefined)(
  'pg-agent guard as a broker under another OS user',
  () => {
    let db: ScratchDatabase;
    let root: string;
    let guardWs: string;
    let agentHome: string;
    let guardEnv: Record<string, string>;
    let guard: ChildProcess;
    let guardLog = '';
    let url: string;
    /** pg-agent as the guard's OS user, on its workspace and database (contrib/systemd/pg-agent-broker). */
    const asBroker = (args: string[]) =>
      run(GUARD_UID, process.execPath, [BROKER_CLI, ...args, '--workspace', guardWs], guardEnv, guardWs);
    const asAgent = (command: string, args: string[]) =>
      run(AGENT_UID, command, args, { HOME: agentHome, XDG_CONFIG_HOME: join(agentHome, '.config') }, agentHome);
    const n = async () => Number(await queryValue(db.url, 'SELECT n FROM items WHERE id = 1'));

    /** The agent's client: node-postgres through the guard, in the test process (a guard client has no OS identity). */
    async function send(sql: string): Promise<pg.DatabaseError | undefined> {
      const client = await connect(url);
      try {
        return await failure(client.query(sql));
      } finally {
        await client.end();
      }
    }

    beforeAll(async () => {
      db = await createScratchDatabase('pgagent_guard_osuser');
      await execSql(db.url, 'CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL); INSERT INTO items VALUES (1, 0)');
      root = mkdtempSync(join(tmpdir(), 'pgagent-broker-os-'));
      chmodSync(root, 0o755);
      guardWs = join(root, 'var-lib-pg-agent');
      agentHome = join(root, 'agent');
      for (const [dir, uid] of [
        [guardWs, GUARD_UID],
        [agentHome, AGENT_UID],
      ] as const) {
        mkdirSync(dir);
        chownSync(dir, uid, uid);
        chmodSync(dir, 0o700);
      }
      guardEnv = { DATABASE_URL: db.url, HOME: guardWs, XDG_CONFIG_HOME: join(guardWs, 'config') };
      // The EnvironmentFile: readable by the guard's user only.
      writeFileSync(join(guardWs, 'guard.env'), `DATABASE_URL=${db.url}\n`, { mode: 0o600 });
      chownSync(join(guardWs, 'guard.env'), GUARD_UID, GUARD_UID);
      const added = await asBroker(['guard', 'users', 'add', 'agent', '--json']);
      expect(added.code, added.stderr).toBe(0);
      const template = new URL((JSON.parse(added.stdout) as { url: string }).url);
      guard = spawn(process.execPath, [BROKER_CLI, 'guard', '--listen', '127.0.0.1:0', '--workspace', guardWs], {
        uid: GUARD_UID,
        gid: GUARD_UID,
        cwd: guardWs,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...guardEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const port = await new Promise<number>((resolve, reject) => {
        guard.stderr!.on('data', (chunk: Buffer) => {
          guardLog += chunk.toString('utf8');
          const match = /pg-agent guard: postgresql:\/\/127\.0\.0\.1:(\d+)\//.exec(guardLog);
          if (match) resolve(Number(match[1]));
        });
        guard.once('exit', (code) => reject(new Error(`the guard exited (${code}): ${guardLog}`)));
      });
      template.port = String(port);
      url = template.toString();
    }, 60_000);

    afterAll(async () => {
      if (process.env.GUARD_DEBUG) console.log(guardLog);
      if (guard && guard.exitCode === null) {
        const exited = new Promise((resolve) => guard.once('exit', resolve));
        guard.kill('SIGINT');
        await exited;
      }
      await db?.drop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it("holds the agent's write; the agent can neither read the broker's store nor approve; the broker's user approves and the retry runs once", async () => {
      const held = await send(WRITE);
      expect(held?.code).toBe('PA001');
      const id = /ticket (tkt_[a-z0-9]+)/.exec(held?.message ?? '')?.[1] ?? '';
      expect(id).not.toBe('');
      // The guard's process really is the other user.
      expect((await run(0, 'ps', ['-o', 'uid=', '-p', String(guard.pid)], {}, root)).stdout.trim()).toBe(
        String(GUARD_UID),
      );

      // The agent (another OS user) cannot read the broker's environment file, store, or approve there.
      const cat = await asAgent('cat', [join(guardWs, 'guard.env')]);
      expect(cat.code).not.toBe(0);
      expect(cat.stderr).toContain('Permission denied');
      const approve = await asAgent(process.execPath, [
        AGENT_CLI,
        'approvals',
        'approve',
        id,
        '--workspace',
        guardWs,
        '--db',
        url,
      ]);
      expect(approve.code, approve.stdout).not.toBe(0);
      expect(approve.stderr).toContain('EACCES');
      expect(await send(WRITE).then((e) => e?.code)).toBe('PA001');
      expect(await n()).toBe(0);

      // A person acting as the broker's user approves; the agent's identical retry runs once.
      const approved = await asBroker(['approvals', 'approve', id]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(await n()).toBe(0);
      expect(await send(WRITE)).toBeUndefined();
      expect(await n()).toBe(1);
      expect((await send(WRITE))?.code).toBe('PA001');
      expect(await n()).toBe(1);
    });

    it("signed mode on top: the approver's key in the broker's config, typed for on her terminal as the broker's user, counts; the broker's user without a terminal cannot approve", async () => {
      // The admin (root here, its own config and workspace) pins a policy and enrols alice, whose key the broker's user keeps.
      const admin = join(root, 'admin');
      mkdirSync(admin);
      const adminEnv = { HOME: admin, XDG_CONFIG_HOME: join(admin, 'config') };
      const asAdmin = (args: string[], answers: string[]) =>
        onTerminal([process.execPath, CLI_PATH, ...args, '--db', db.url, '--workspace', admin], adminEnv, answers);
      expect((await asAdmin(['keys', 'new', '--name', 'admin'], ['admin-passphrase', 'admin-passphrase'])).code).toBe(
        0,
      );
      const init = await asAdmin(['policy', 'init', '--admin', 'admin', '--json'], ['admin-passphrase']);
      const initTicket = /"id":"(tkt_[a-z2-7]{20})"/.exec(init.output)?.[1] ?? '';
      expect((await asAdmin(['approvals', 'approve', initTicket], ['admin-passphrase'])).code).toBe(0);
      expect(
        (
          await run(
            0,
            process.execPath,
            [CLI_PATH, 'exec', '--ticket', initTicket, '--db', db.url, '--workspace', admin],
            adminEnv,
            admin,
          )
        ).code,
      ).toBe(0);
      const asBrokerOnTerminal = (args: string[], answers: string[]) =>
        onTerminal(
          ['runuser', '-u', 'nobody', '--', process.execPath, BROKER_CLI, ...args, '--workspace', guardWs],
          guardEnv,
          answers,
        );
      const key = await asBrokerOnTerminal(
        ['keys', 'new', '--name', 'alice', '--json'],
        ['alice-passphrase', 'alice-passphrase'],
      );
      expect(key.code, key.output).toBe(0);
      const alice = /"publicKey":"([A-Za-z0-9_-]{43})"/.exec(key.output)?.[1] ?? '';
      expect((await asAdmin(['policy', 'enroll', 'alice', `--key=${alice}`], ['admin-passphrase'])).code).toBe(0);

      const held = await send(WRITE);
      expect(held?.code).toBe('PA001');
      const id = /ticket (tkt_[a-z0-9]+)/.exec(held?.message ?? '')?.[1] ?? '';
      // A process running as the broker's user, without a terminal (what an agent that became it would have): refused.
      const unsigned = await asBroker(['approvals', 'approve', id]);
      expect(unsigned.code).toBe(4);
      expect(unsigned.stderr).toContain('controlling terminal');
      expect(await send(WRITE).then((e) => e?.code)).toBe('PA001');
      expect(await n()).toBe(1);
      // Alice, as the broker's user on her terminal, with her passphrase: counted; the retry runs once, in the ledger.
      const signed = await asBrokerOnTerminal(['approvals', 'approve', id], ['alice-passphrase']);
      expect(signed.code, signed.output).toBe(0);
      expect(await send(WRITE)).toBeUndefined();
      expect(await n()).toBe(2);
      expect(await queryValue(db.url, `SELECT status FROM pgagent.executions WHERE ticket_id = '${id}'`)).toBe('done');
    });
  },
);
