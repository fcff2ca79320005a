// Who may approve (SPEC §5.3), through the CLI as a team uses it: `pg-agent keys new` per person (each with
// their own $XDG_CONFIG_HOME), approval.policy in the shared .pgagent/config.json, and `pg-agent exec`
// verifying signatures and policy at execution time (exit 4 naming what is missing; the ticket unspent).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { createPlanTicket } from '../../../../src/core/approvals/planTicket';
import { runPgAgent } from '../../../support/cliHarness';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { queryValue } from '../../../support/scratchDatabase';

const WRITE = 'UPDATE items SET n = n + 1 WHERE id = 1';

interface ShownTicket {
  id: string;
  kind: string;
  status: string;
  requestedBy: string;
  connection: string;
  decisions: { by: string; approve: boolean; signed: boolean; at: string; comment?: string }[];
}

describe.runIf(postgresAvailable)('team approvals: keys, signed decisions and approval.policy', () => {
  let scratch: ScratchDatabase;
  let root: string;
  let workspace: string;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      'CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL); INSERT INTO items VALUES (1, 0), (2, 0)',
    );
  });
  afterAll(async () => {
    await scratch?.drop();
  });
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgagent-team-'));
    workspace = join(root, 'ws');
    await execSql(scratch.url, 'UPDATE items SET n = 0');
    return () => rmSync(root, { recursive: true, force: true });
  });

  /** `pg-agent` run by one person: their $USER and their own config home (where their private keys are). */
  const as = (person: string, [command, ...args]: string[]) =>
    runPgAgent([command ?? '', '--db', scratch.url, '--workspace', workspace, ...args], {
      cwd: root,
      env: { USER: person, XDG_CONFIG_HOME: join(root, `home-${person}`) },
      passphrase: `${person}-passphrase`,
    });
  const n = async () => Number(await queryValue(scratch.url, 'SELECT n FROM items WHERE id = 1'));

  /** A key, and its public half listed in the team's config (what a team commits; `keys new` itself enrols nobody). */
  async function enrolled(person: string, roles: string[] = []): Promise<void> {
    const made = await as(person, ['keys', 'new', '--name', person, '--json']);
    expect(made.code, made.stderr).toBe(0);
    const { publicKey } = JSON.parse(made.stdout) as { publicKey: string };
    const file = join(workspace, '.pgagent', 'config.json');
    const config = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as {
      approval?: { approvers?: unknown[] };
    };
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    const approval = config.approval ?? {};
    writeFileSync(
      file,
      JSON.stringify(
        {
          ...config,
          approval: { ...approval, approvers: [...(approval.approvers ?? []), { name: person, publicKey, roles }] },
        },
        null,
        2,
      ),
    );
  }

  function policy(value: Record<string, unknown>): void {
    const file = join(workspace, '.pgagent', 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { approval: Record<string, unknown> };
    writeFileSync(file, JSON.stringify({ ...config, approval: { ...config.approval, policy: value } }, null, 2));
  }

  async function heldBy(person: string): Promise<string> {
    const held = await as(person, ['sql', '--json', '--no-input', '--by', person, '--', WRITE]);
    expect(held.code, held.stderr).toBe(3);
    return (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
  }

  async function show(id: string): Promise<ShownTicket> {
    const shown = await as('anyone', ['approvals', 'show', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    return JSON.parse(shown.stdout) as ShownTicket;
  }

  it('makes a key pair: private key encrypted, 0600, outside the workspace; no approver is enrolled; names are checked', async () => {
    const made = await as('alice', ['keys', 'new', '--name', 'alice', '--roles', 'dba,ops', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const key = JSON.parse(made.stdout) as { name: string; publicKey: string; enroll: string };
    expect(Object.keys(key).sort()).toEqual(['enroll', 'name', 'publicKey']);
    expect(key.publicKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key.enroll).toBe(`pg-agent policy enroll alice --key ${key.publicKey} --roles dba,ops`);
    const file = join(root, 'home-alice', 'pg-agent', 'keys', 'alice.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain('PRIVATE KEY');
    // Making a key enrols nobody: the workspace config is not written.
    expect(existsSync(join(workspace, '.pgagent', 'config.json'))).toBe(false);
    expect((await as('alice', ['keys', 'new', '--name', 'alice'])).code).toBe(2);
    expect((await as('alice', ['keys', 'new', '--name', '../evil'])).code).toBe(2);
    expect((await as('alice', ['keys', 'new'])).code).toBe(2);
    expect(existsSync(join(root, 'home-alice', 'pg-agent', 'keys', 'evil.key'))).toBe(false);
  });

  it('a key made before passphrases signs nothing until `keys protect` encrypts it', async () => {
    const dir = join(root, 'home-alice', 'pg-agent', 'keys');
    mkdirSync(dir, { recursive: true });
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(join(dir, 'alice.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), {
      mode: 0o600,
    });
    const id = await heldBy('bob');
    const refused = await as('alice', ['approvals', 'approve', id]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('stored without a passphrase');
    expect((await show(id)).decisions).toEqual([]);
    const protectedKey = await as('alice', ['keys', 'protect', 'alice', '--json']);
    expect(protectedKey.code, protectedKey.stderr).toBe(0);
    expect(existsSync(join(dir, 'alice.pem'))).toBe(false);
    expect(readFileSync(join(dir, 'alice.key'), 'utf8')).not.toContain('PRIVATE KEY');
    expect((await as('alice', ['approvals', 'approve', id])).code).toBe(0);
    expect((await show(id)).decisions).toMatchObject([{ by: 'alice', approve: true }]);
  });

  it('with nothing configured, approvals work as before and are recorded unsigned', async () => {
    const id = await heldBy('alice');
    expect((await as('bob', ['approvals', 'approve', id, '--comment', 'fine'])).code).toBe(0);
    expect(await show(id)).toMatchObject({
      kind: 'write',
      status: 'APPROVED',
      requestedBy: 'alice',
      decisions: [{ by: 'bob', approve: true, signed: false, comment: 'fine' }],
    });
    expect((await as('alice', ['exec', '--ticket', id])).code).toBe(0);
    expect(await n()).toBe(1);
  });

  it('requireSignature: an unsigned approval is refused at execution (exit 4, ticket unspent); a signed one runs', async () => {
    await enrolled('bob');
    policy({ requireSignature: true });
    const id = await heldBy('alice');
    expect((await as('carol', ['approvals', 'approve', id])).code).toBe(0);
    const refused = await as('alice', ['exec', '--ticket', id]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('signed with a key listed in approval.approvers');
    expect(refused.stderr).toContain('carol approved without a verifiable signature');
    expect((await show(id)).status).toBe('APPROVED');
    expect(await n()).toBe(0);
    // Bob signs (his only key is used); a different --by than his key's name is refused.
    expect((await as('bob', ['approvals', 'approve', id, '--by', 'mallory'])).code).toBe(2);
    expect((await as('bob', ['approvals', 'approve', id])).code).toBe(0);
    expect((await show(id)).decisions.map((d) => [d.by, d.signed])).toEqual([
      ['carol', false],
      ['bob', true],
    ]);
    const ran = await as('alice', ['exec', '--ticket', id]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await n()).toBe(1);
  });

  it('a forged or altered signature is refused, whatever the policy', async () => {
    await enrolled('bob');
    const id = await heldBy('alice');
    expect((await as('bob', ['approvals', 'approve', id])).code).toBe(0);
    // Someone with write access to the tickets moves the decision's time: the signature no longer covers it.
    const file = join(workspace, '.pgagent', 'approvals', `${id}.json`);
    const ticket = JSON.parse(readFileSync(file, 'utf8')) as { decisions: { at: string }[] };
    const decision = ticket.decisions[0];
    if (!decision) throw new Error('no decision');
    decision.at = new Date(Date.parse(decision.at) + 1000).toISOString();
    writeFileSync(file, JSON.stringify(ticket));
    const refused = await as('alice', ['exec', '--ticket', id]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('forged or altered');
    expect(await n()).toBe(0);
  });

  it('noSelfApprovalAbove and twoPersonAbove: the requester does not count, two other people must approve', async () => {
    for (const person of ['alice', 'bob', 'carol']) await enrolled(person);
    policy({ requireSignature: true, noSelfApprovalAbove: 'none', twoPersonAbove: 'none' });
    const id = await heldBy('alice');
    expect((await show(id)).requestedBy).toBe('alice');
    expect((await as('alice', ['approvals', 'approve', id])).code).toBe(0);
    const self = await as('alice', ['exec', '--ticket', id]);
    expect(self.code).toBe(4);
    expect(self.stderr).toContain('someone other than alice');
    expect((await as('bob', ['approvals', 'approve', id])).code).toBe(0);
    const one = await as('alice', ['exec', '--ticket', id]);
    expect(one.code).toBe(4);
    expect(one.stderr).toContain('a second approver');
    expect(one.stderr).toContain('approved so far by bob');
    expect((await as('carol', ['approvals', 'approve', id])).code).toBe(0);
    expect((await as('alice', ['exec', '--ticket', id])).code).toBe(0);
    expect(await n()).toBe(1);
  });

  it('rolesFor: a ticket of that risk needs an approver with the role', async () => {
    await enrolled('bob');
    await enrolled('dora', ['dba']);
    policy({ rolesFor: { LOW: ['dba'] } });
    const id = await heldBy('alice');
    expect((await as('bob', ['approvals', 'approve', id])).code).toBe(0);
    const refused = await as('alice', ['exec', '--ticket', id]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('the role dba');
    expect((await as('dora', ['approvals', 'approve', id])).code).toBe(0);
    expect((await as('alice', ['exec', '--ticket', id])).code).toBe(0);
  });

  it('lists plan tickets with write tickets, and refuses a decision on a plan that changed (stale)', async () => {
    const write = await heldBy('alice');
    const store = new FileTicketStore(join(workspace, '.pgagent', 'approvals'));
    const connection = (await show(write)).connection;
    const plan = await createPlanTicket(store, {
      jobId: 'job_0123456789abcdef',
      planMd: '# Plan\n',
      todosYaml: 'todos: []\n',
      cycle: 1,
      title: 'Archive',
      connection,
      requestedBy: 'alice',
    });
    await store.close();
    const listed = await as('bob', ['approvals', 'list', '--json']);
    expect((JSON.parse(listed.stdout) as ShownTicket[]).map((t) => [t.id, t.kind]).sort()).toEqual(
      [
        [plan.id, 'plan'],
        [write, 'write'],
      ].sort(),
    );
    const text = await as('bob', ['approvals', 'list']);
    expect(text.stdout).toContain('job job_0123456789abcdef');
    const stale = await as('bob', ['approvals', 'approve', plan.id, '--hash', 'a'.repeat(64)]);
    expect(stale.code).toBe(4);
    expect(stale.stderr).toContain('another version of the plan');
    expect((await as('bob', ['approvals', 'approve', plan.id, '--hash', plan.sqlHash])).code).toBe(0);
    expect(await show(plan.id)).toMatchObject({
      kind: 'plan',
      status: 'APPROVED',
      decisions: [{ by: 'bob', approve: true }],
    });
    // A plan ticket is not SQL: exec refuses it and leaves it for its job.
    expect((await as('bob', ['exec', '--ticket', plan.id])).code).not.toBe(0);
  });
});
