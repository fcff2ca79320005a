/**
 * Approving through the broker's own connection (issue 24 item 3, docs/guard-broker.md §3): alice has only a guard
 * URL and her enrolled key — no DATABASE_URL, an empty workspace, no access to the guard's store. `approvals show
 * --guard URL` shows her the held transaction; `approvals approve --guard URL`, her passphrase typed on a
 * pseudo-terminal, signs it on her side and the guard records it; the client's identical retry commits once, with
 * its ledger row. The attacks a guard client (an agent with guard credentials) can try are refused and leave the
 * ticket pending: an unsigned decide (psql), a key the admin did not enrol, alice's signature replayed for another
 * ticket or for other content, the command hidden in a multi-statement message or a CTE; and in default mode (no
 * signed policy) no decision travels at all. Run as root, the guard is `nobody` (its workspace 0700) and alice is
 * `daemon`, who cannot read the guard's store. Real processes; every assertion reads the database or the guard.
 */
import { execFile, execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKey } from '../../../src/core/approvals/keyFiles';
import type { BrokerTicketView } from '../../../src/core/approvals/wireDecision';
import { signWireDecision } from '../../../src/core/approvals/wireDecision';
import type { PolicyDocument } from '../../../src/core/approvals/policyDocument';
import { personEnv, runAsAgent, runOnTerminal } from '../../support/agentProcess';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { readableBy } from '../../support/readableCopy';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { runPsql, ticketIn } from '../../support/psqlRun';
import type { PsqlRun } from '../../support/psqlRun';

const PASS = { admin: 'admin-passphrase', alice: 'alice-passphrase', mallory: 'mallory-passphrase' } as const;
type Person = keyof typeof PASS;
const quoted = (text: string): string => `'${text.replace(/'/g, "''")}'`;
const asRoot = process.getuid?.() === 0;
const GUARD_UID = 65534; // nobody
const APPROVER_UID = 1; // daemon
const PTY_RUN = fileURLToPath(new URL('../../support/ptyRun.py', import.meta.url));

/** `pg-agent` under a pseudo-terminal as the approver's OS user (daemon when root); passphrase prompts answered in turn. */
function approverOnTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  answers: string[],
): Promise<{ code: number; stdout: string; answered: number }> {
  if (!asRoot) return runOnTerminal(args, env, answers);
  // The approver's user runs what it can read: a clone under /root is out of its reach.
  const approver = readableBy(APPROVER_UID, [PTY_RUN]);
  return new Promise((resolve, reject) => {
    execFile(
      'python3',
      [
        approver.files[0] ?? PTY_RUN,
        JSON.stringify([process.execPath, approver.cli, ...args]),
        JSON.stringify(answers),
      ],
      { env, uid: APPROVER_UID, gid: APPROVER_UID },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`ptyRun.py failed: ${stderr}`));
        const ran = JSON.parse(stdout) as { code: number; output: string; answered: number };
        resolve({ code: ran.code, stdout: ran.output, answered: ran.answered });
      },
    );
  });
}

const psql = (url: string, sql: string): Promise<PsqlRun> => runPsql([url, '-At', '-v', 'ON_ERROR_STOP=1', '-c', sql]);

describe.skipIf(!postgresAvailable)("approvals over the guard's connection, signed on the approver's side", () => {
  let db: ScratchDatabase;
  let plainDb: ScratchDatabase;
  let root: string;
  let guard: GuardProcess;
  let plainGuard: GuardProcess;
  const home = (person: Person) => join(root, `home-${person}`);
  /** The approver's environment: her own config, nothing that reaches the database. */
  const approverEnv = (person: Person) => {
    const env = personEnv(home(person), { USER: person, HOME: home(person) });
    for (const name of ['DATABASE_URL', 'PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE']) delete env[name];
    return env;
  };
  const emptyWorkspace = () => {
    const dir = mkdtempSync(join(root, 'approver-ws-'));
    if (asRoot) chownSync(dir, APPROVER_UID, APPROVER_UID);
    return dir;
  };
  const admin = (args: string[], answers: string[]) =>
    runOnTerminal(
      [args[0] ?? '', '--db', db.url, '--workspace', join(root, 'setup'), ...args.slice(1)],
      personEnv(home('admin'), { USER: 'admin' }),
      answers,
    );
  const overGuard = (person: Person, url: string, args: string[], answers: string[] = []) =>
    approverOnTerminal(
      ['approvals', ...args, '--guard', url, '--workspace', emptyWorkspace()],
      approverEnv(person),
      answers,
    );
  const orders = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM orders'));

  async function makeKey(person: Person): Promise<string> {
    const made = await runOnTerminal(
      ['keys', 'new', '--name', person, '--json', '--workspace', join(root, 'setup')],
      personEnv(home(person), { USER: person }),
      [PASS[person], PASS[person]],
    );
    expect(made.code, made.stdout).toBe(0);
    return /"publicKey":"([A-Za-z0-9_-]{43})"/.exec(made.stdout)?.[1] ?? '';
  }

  /** A fresh client through the guard: BEGIN; the statements; COMMIT. Resolves to the COMMIT's error, if any. */
  async function transaction(url: string, statements: string[]): Promise<pg.DatabaseError | undefined> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('BEGIN');
      for (const sql of statements) await client.query(sql);
      await client.query('COMMIT');
      return undefined;
    } catch (error) {
      return error as pg.DatabaseError;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** What the guard answers for a ticket, as any guard client reads it. */
  async function view(url: string, id: string): Promise<BrokerTicketView> {
    const ran = await psql(url, `SELECT * FROM pg_agent.ticket(${quoted(id)})`);
    expect(ran.code, ran.stderr).toBe(0);
    return JSON.parse(ran.stdout.trim()) as BrokerTicketView;
  }

  /** Alice's real key, opened with her passphrase, to sign decisions an attacker then misuses. */
  async function aliceSigns(shown: BrokerTicketView, approve = true) {
    const key = await loadKey(approverEnv('alice'), 'alice', () => Promise.resolve(PASS.alice));
    const document = JSON.parse(shown.policy?.document ?? '{}') as PolicyDocument;
    return signWireDecision(shown, document, key, approve, new Date());
  }

  const decide = (url: string, decision: unknown) =>
    psql(url, `SELECT pg_agent.decide(${quoted(JSON.stringify(decision))})`);

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgagent-wire-approval-'));
    mkdirSync(join(root, 'setup'));
    db = await createScratchDatabase('pgagent_guard_wire');
    plainDb = await createScratchDatabase('pgagent_guard_wire_plain');
    await execSql(db.url, 'CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, note text)');
    await execSql(plainDb.url, 'CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, note text)');
    // The admin pins the signed policy (a held write she approves and runs) and enrols alice; mallory has a key, not enrolled.
    await makeKey('admin');
    const init = await admin(['policy', 'init', '--admin', 'admin', '--json'], [PASS.admin]);
    expect(init.code, init.stdout).toBe(3);
    const initTicket = /"id":"(tkt_[a-z2-7]{20})"/.exec(init.stdout)?.[1] ?? '';
    expect((await admin(['approvals', 'approve', initTicket], [PASS.admin])).code).toBe(0);
    const pinned = await runAsAgent(
      ['exec', '--ticket', initTicket, '--db', db.url, '--workspace', join(root, 'setup')],
      personEnv(home('admin'), { USER: 'admin' }),
    );
    expect(pinned.code, pinned.stderr).toBe(0);
    const alice = await makeKey('alice');
    expect((await admin(['policy', 'enroll', 'alice', `--key=${alice}`], [PASS.admin])).code).toBe(0);
    await makeKey('mallory');
    if (asRoot) {
      chmodSync(root, 0o755);
      for (const person of ['alice', 'mallory'] as const)
        execFileSync('chown', ['-R', `${APPROVER_UID}:${APPROVER_UID}`, home(person)]);
    }
    guard = await startGuardProcess(db.url, asRoot ? { uid: GUARD_UID } : {});
    plainGuard = await startGuardProcess(plainDb.url, asRoot ? { uid: GUARD_UID } : {});
  }, 180_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr());
    await guard?.stop();
    await plainGuard?.stop();
    await db?.drop();
    await plainDb?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('alice approves with only the guard URL and her key: the retry commits once, with its ledger row', async () => {
    const tx = [
      "INSERT INTO orders (customer) VALUES ('ann')",
      "UPDATE orders SET note = 'paid' WHERE customer = 'ann'",
    ];
    const held = await transaction(guard.url, tx);
    expect(held?.code).toBe('PA001');
    const id = ticketIn(held?.message ?? '');
    if (asRoot) {
      // The guard is another OS user, and alice cannot read its store.
      expect(
        execFileSync('ps', ['-o', 'uid=', '-p', String(guard.child.pid)])
          .toString()
          .trim(),
      ).toBe(String(GUARD_UID));
      const peek = await new Promise<string>((resolve) =>
        execFile(
          'ls',
          [join(guard.workspace, '.pgagent')],
          { uid: APPROVER_UID, gid: APPROVER_UID },
          (_e, _o, stderr) => resolve(stderr),
        ),
      );
      expect(peek).toContain('Permission denied');
    }

    const listed = await overGuard('alice', guard.url, ['list']);
    expect(listed.code, listed.stdout).toBe(0);
    expect(listed.stdout).toContain(id);
    const shown = await overGuard('alice', guard.url, ['show', id]);
    expect(shown.code, shown.stdout).toBe(0);
    expect(shown.stdout).toContain("INSERT INTO orders (customer) VALUES ('ann')");
    expect(shown.stdout).toContain('signed policy version');
    const missing = await overGuard('alice', guard.url, ['show', `tkt_${'a'.repeat(20)}`]);
    expect(missing.code, missing.stdout).toBe(2);
    expect(missing.stdout).toContain('No ticket');

    // mallory's key is not enrolled: her CLI refuses before anything is sent, and nothing is recorded.
    const notEnrolled = await overGuard('mallory', guard.url, ['approve', id], [PASS.mallory]);
    expect(notEnrolled.code, notEnrolled.stdout).toBe(4);
    expect(notEnrolled.stdout).toContain('not enrolled');
    expect((await view(guard.url, id)).ticket.status).toBe('PENDING_APPROVAL');

    const approved = await overGuard('alice', guard.url, ['approve', id], [PASS.alice]);
    expect(approved.code, approved.stdout).toBe(0);
    expect(approved.answered).toBe(1);
    expect(approved.stdout).toContain('APPROVED');
    expect(await orders()).toBe(0);
    expect(await transaction(guard.url, tx)).toBeUndefined();
    expect(await queryValue(db.url, "SELECT count(*) || ':' || max(note) FROM orders")).toBe('1:paid');
    expect(await queryValue(db.url, `SELECT status FROM pgagent.executions WHERE ticket_id = '${id}'`)).toBe('done');
    expect((await transaction(guard.url, tx))?.code).toBe('PA001');
    expect(await orders()).toBe(1);
  });

  it('refuses what a guard client can forge: unsigned, unenrolled key, replayed for another ticket or other content, hidden in a batch or a CTE', async () => {
    const held = await transaction(guard.url, ["INSERT INTO orders (customer) VALUES ('mallory')"]);
    const id = ticketIn(held?.message ?? '');
    // Another statement (a transaction of the same templates would be the same ticket, still waiting).
    const other = ticketIn(
      (await transaction(guard.url, ["UPDATE orders SET note = 'eve' WHERE customer = 'eve'"]))?.message ?? '',
    );
    expect(id).not.toBe('');
    expect(other).not.toBe('');
    expect(other).not.toBe(id);
    const shown = await view(guard.url, id);
    expect(shown.ticket.status).toBe('PENDING_APPROVAL');
    const pending = async () =>
      (await view(guard.url, id)).ticket.status === 'PENDING_APPROVAL' &&
      (await view(guard.url, other)).ticket.status === 'PENDING_APPROVAL';

    // Unsigned, by a plain guard client.
    const unsigned = await decide(guard.url, {
      ticket: id,
      approve: true,
      by: 'alice',
      at: new Date().toISOString(),
      hash: shown.ticket.sqlHash,
    });
    expect(unsigned.code).not.toBe(0);
    expect(unsigned.stderr).toContain('unsigned decision is never accepted');

    // Signed by a key the admin did not enrol, under alice's name or its own.
    const genuine = await aliceSigns(shown);
    const { privateKey } = generateKeyPairSync('ed25519');
    const stranger = signWireDecision(
      shown,
      JSON.parse(shown.policy?.document ?? '{}') as PolicyDocument,
      { name: 'alice', privateKey },
      true,
      new Date(),
    );
    expect((await decide(guard.url, stranger)).stderr).toContain("does not verify against alice's enrolled key");
    const named = signWireDecision(
      shown,
      JSON.parse(shown.policy?.document ?? '{}') as PolicyDocument,
      { name: 'mallory', privateKey },
      true,
      new Date(),
    );
    expect((await decide(guard.url, named)).stderr).toContain('not an approver the admin enrolled');

    // alice's genuine signature, replayed for another ticket, or for other content.
    const otherHash = (await view(guard.url, other)).ticket.sqlHash;
    expect((await decide(guard.url, { ...genuine, ticket: other })).stderr).toContain('is not recorded');
    expect((await decide(guard.url, { ...genuine, ticket: other, hash: otherHash })).stderr).toContain(
      "does not verify against alice's enrolled key",
    );
    expect((await decide(guard.url, { ...genuine, hash: otherHash })).stderr).toContain('changed since it was shown');

    // The genuine decision hidden in a multi-statement message or a CTE is not the guard's command: judged as SQL.
    const text = quoted(JSON.stringify(genuine));
    const batch = await psql(guard.url, `SELECT 1; SELECT pg_agent.decide(${text})`);
    expect(batch.code).not.toBe(0);
    const cte = await psql(guard.url, `WITH d AS (SELECT pg_agent.decide(${text})) SELECT * FROM d`);
    expect(cte.code).not.toBe(0);
    // Judged like any SQL: the upstream (read-only) session has no pg_agent schema; nothing reached the store.
    for (const ran of [batch, cte])
      expect(ran.stderr).toMatch(/schema "pg_agent" does not exist|refused by the guard|held for approval/);
    expect(await pending()).toBe(true);
    expect(await orders()).toBe(1);

    // The genuine one, sent as the guard's command, is what counts (then a replay of it is refused by the store).
    expect((await decide(guard.url, genuine)).code).toBe(0);
    expect((await view(guard.url, id)).ticket.status).toBe('APPROVED');
    expect((await decide(guard.url, genuine)).code).not.toBe(0);
  });

  it("in default mode (no signed policy) no decision travels over the guard's connection", async () => {
    const held = await transaction(plainGuard.url, ["INSERT INTO orders (customer) VALUES ('zoe')"]);
    const id = ticketIn(held?.message ?? '');
    const refused = await overGuard('alice', plainGuard.url, ['approve', id], [PASS.alice]);
    expect(refused.code, refused.stdout).toBe(4);
    expect(refused.answered).toBe(0);
    expect(refused.stdout).toContain('default mode');
    const shown = await view(plainGuard.url, id);
    expect(shown.policy).toBeNull();
    const key = await loadKey(approverEnv('alice'), 'alice', () => Promise.resolve(PASS.alice));
    const sent = await decide(
      plainGuard.url,
      signWireDecision(shown, { version: 1 } as PolicyDocument, key, true, new Date()),
    );
    expect(sent.stderr).toContain('pins no signed policy');
    expect((await view(plainGuard.url, id)).ticket.status).toBe('PENDING_APPROVAL');
    expect(Number(await queryValue(plainDb.url, 'SELECT count(*) FROM orders'))).toBe(0);
  });
});
