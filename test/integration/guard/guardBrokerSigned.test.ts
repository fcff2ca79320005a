/**
 * Approvals reaching the broker signed (issue 24 item 3, SPEC §5 3a): a database pins a signed policy (the admin's
 * `policy init`, `policy enroll alice`), and a client's transaction through `pg-agent guard` is held on a ticket in
 * the GUARD's store. An approval written into that store by a process that can write the workspace (no signature)
 * is refused at COMMIT, and nothing commits; alice's approval, typed with her passphrase on a terminal against the
 * guard's workspace, is honoured: the retry commits once, with its ledger row. Real processes; the people's under
 * a pseudo-terminal; every assertion reads the database.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personEnv, runAsAgent, runOnTerminal } from '../../support/agentProcess';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';

const PASS = { admin: 'admin-passphrase', alice: 'alice-passphrase' } as const;
describe.skipIf(!postgresAvailable)('pg-agent guard as a broker: approvals reach it signed', () => {
  let db: ScratchDatabase;
  let root: string;
  let guard: GuardProcess;
  let client: pg.Client;
  const home = (person: string) => join(root, `home-${person}`);
  const at = (workspace: string, [command, ...rest]: string[]) => [
    command ?? '',
    '--db',
    db.url,
    '--workspace',
    workspace,
    ...rest,
  ];
  const onTerminal = (person: keyof typeof PASS, workspace: string, args: string[], answers: string[]) =>
    runOnTerminal(at(workspace, args), personEnv(home(person), { USER: person }), answers);
  const orders = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM orders'));

  async function makeKey(person: keyof typeof PASS): Promise<string> {
    const made = await onTerminal(
      person,
      join(root, 'setup'),
      ['keys', 'new', '--name', person, '--json'],
      [PASS[person], PASS[person]],
    );
    expect(made.code, made.stdout).toBe(0);
    return /"publicKey":"([A-Za-z0-9_-]{43})"/.exec(made.stdout)?.[1] ?? '';
  }

  /** BEGIN; the statements; COMMIT. Resolves to the COMMIT's error, if any. */
  async function transaction(statements: string[]): Promise<pg.DatabaseError | undefined> {
    await client.query('BEGIN');
    for (const sql of statements) await client.query(sql);
    return client.query('COMMIT').then(
      () => undefined,
      (e: pg.DatabaseError) => e,
    );
  }

  beforeAll(async () => {
    db = await createScratchDatabase('pgagent_guard_signed');
    await execSql(db.url, 'CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, note text)');
    root = mkdtempSync(join(tmpdir(), 'pgagent-broker-signed-'));
    const setup = join(root, 'setup');
    // The admin pins the policy (a held write the admin approves and runs) and enrols alice.
    await makeKey('admin');
    const init = await onTerminal('admin', setup, ['policy', 'init', '--admin', 'admin', '--json'], [PASS.admin]);
    expect(init.code, init.stdout).toBe(3);
    const initTicket = /"id":"(tkt_[a-z2-7]{20})"/.exec(init.stdout)?.[1] ?? '';
    expect((await onTerminal('admin', setup, ['approvals', 'approve', initTicket], [PASS.admin])).code).toBe(0);
    const pinned = await runAsAgent(
      at(setup, ['exec', '--ticket', initTicket]),
      personEnv(home('admin'), { USER: 'admin' }),
    );
    expect(pinned.code, pinned.stderr).toBe(0);
    const alice = await makeKey('alice');
    const enrolled = await onTerminal('admin', setup, ['policy', 'enroll', 'alice', `--key=${alice}`], [PASS.admin]);
    expect(enrolled.code, enrolled.stdout).toBe(0);
    guard = await startGuardProcess(db.url);
    client = new pg.Client({ connectionString: guard.url, application_name: 'guard-signed' });
    client.on('error', () => undefined);
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr());
    await client?.end().catch(() => undefined);
    await guard?.stop();
    await db?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("refuses an unsigned approval written into the guard's store, and honours alice's signed one: committed once, with its ledger row", async () => {
    // A process that can write the guard's workspace records an approval by hand, without a signature.
    const unsignedTx = ["INSERT INTO orders (customer) VALUES ('mallory')"];
    const held = await transaction(unsignedTx);
    expect(held?.code).toBe('PA001');
    const forged = ticketIn(held?.message ?? '');
    const file = join(guard.workspace, '.pgagent', 'approvals', `${forged}.json`);
    const ticket = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    ticket.status = 'APPROVED';
    ticket.decisions = [{ by: 'alice', approve: true, at: new Date().toISOString(), hash: ticket.sqlHash }];
    writeFileSync(file, JSON.stringify(ticket));
    const refused = await transaction(unsignedTx);
    expect(refused?.code).toBe('PA002');
    expect(refused?.message).toContain('it is not signed');
    expect(await orders()).toBe(0);
    expect(
      Number(await queryValue(db.url, `SELECT count(*) FROM pgagent.executions WHERE ticket_id = '${forged}'`)),
    ).toBe(0);

    // Alice, on her terminal, approves a held transaction in the guard's store with her enrolled key.
    const signedTx = [
      "INSERT INTO orders (customer) VALUES ('ann')",
      "UPDATE orders SET note = 'paid' WHERE customer = 'ann'",
    ];
    const waiting = await transaction(signedTx);
    expect(waiting?.code).toBe('PA001');
    const id = ticketIn(waiting?.message ?? '');
    const approved = await onTerminal('alice', guard.workspace, ['approvals', 'approve', id], [PASS.alice]);
    expect(approved.code, approved.stdout).toBe(0);
    expect(await orders()).toBe(0);
    expect(await transaction(signedTx)).toBeUndefined();
    expect(await queryValue(db.url, "SELECT count(*) || ':' || max(note) FROM orders")).toBe('1:paid');
    expect(await queryValue(db.url, `SELECT status FROM pgagent.executions WHERE ticket_id = '${id}'`)).toBe('done');
    // Once: the same transaction again is a new ticket, nothing more commits.
    expect((await transaction(signedTx))?.code).toBe('PA001');
    expect(await orders()).toBe(1);
  });
});
