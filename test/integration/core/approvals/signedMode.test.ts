// Signed mode against a same-user agent (issue 22 items 4-5, SPEC §5 3a, 6): an admin pins a signed policy in
// the database (`policy init`, itself a held write), enrols approvers (`policy enroll`), and every technique an
// agent with a shell as the same OS user tried — approving without a person, a copied key, self-enrolment,
// dropping the workspace policy, status replay, hand-written, rewritten or widened tickets, Redis SET, editing
// the pinned policy — is refused with exit 4 naming why, asserted on the database's rows and ledger.
// Real processes throughout: the agent's have no controlling terminal; the people's run under a pseudo-terminal.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPrivateKey, parseEnvelope } from '../../../../src/core/approvals/keyEnvelope';
import type { ProcessRun } from '../../../support/agentProcess';
import { CLI, personEnv, runAsAgent, runOnTerminal } from '../../../support/agentProcess';
import { queryValue } from '../../../support/scratchDatabase';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { REDIS_URL, redisAvailable } from '../../../support/services';

const WRITE = 'UPDATE items SET n = n + 1 WHERE id = 1';
const PASS = {
  admin: 'admin-passphrase',
  alice: 'alice-passphrase',
  bob: 'bob-passphrase',
  mallory: 'mallory-passphrase',
} as const;

interface ShownTicket {
  id: string;
  status: string;
  sql: string;
  sqlHash: string;
  decisions: { by: string; approve: boolean; signed: boolean; scope?: { database: string; policyVersion: number } }[];
}

describe.runIf(postgresAvailable)(
  'signed mode: a policy pinned in the database, passphrase keys and the execution ledger',
  () => {
    let scratch: ScratchDatabase;
    let root: string;
    let workspace: string;
    const home = (person: string) => join(root, `home-${person}`);
    const publicKeys: Record<string, string> = {};

    /** The common flags; the agent's and the people's processes reach the same database and workspace. */
    const at = ([command, ...rest]: string[]) => [
      command ?? '',
      '--db',
      scratch.url,
      '--workspace',
      workspace,
      ...rest,
    ];
    const agent = (args: string[], input?: string, extra: Record<string, string> = {}) =>
      runAsAgent(at(args), personEnv(home('agent'), { USER: 'agent', ...extra }), input);
    const asPerson = (person: string, args: string[], extra: Record<string, string> = {}) =>
      runAsAgent(at(args), personEnv(home(person), { USER: person, ...extra }));
    const onTerminal = (person: string, args: string[], answers: string[], extra: Record<string, string> = {}) =>
      runOnTerminal(at(args), personEnv(home(person), { USER: person, ...extra }), answers);
    const n = async () => Number(await queryValue(scratch.url, 'SELECT n FROM items WHERE id = 1'));
    const ledger = async (ticket: string) =>
      queryValue(scratch.url, `SELECT status FROM pgagent.executions WHERE ticket_id = '${ticket}'`);

    async function makeKey(person: string, passphrase: string, roles?: string): Promise<string> {
      const made = await onTerminal(
        person,
        ['keys', 'new', '--name', person, '--json', ...(roles ? ['--roles', roles] : [])],
        [passphrase, passphrase],
      );
      expect(made.code, made.stdout).toBe(0);
      const match = /"publicKey":"([A-Za-z0-9_-]{43})"/.exec(made.stdout);
      if (!match?.[1]) throw new Error(`no public key in ${made.stdout}`);
      return match[1];
    }

    async function held(extra: Record<string, string> = {}, sql = WRITE): Promise<string> {
      const run = await agent(['sql', '--json', '--no-input', '--', sql], undefined, extra);
      expect(run.code, run.stderr).toBe(3);
      return (JSON.parse(run.stdout) as { ticket: { id: string } }).ticket.id;
    }

    async function show(id: string, extra: Record<string, string> = {}): Promise<ShownTicket> {
      const run = await agent(['approvals', 'show', id, '--json'], undefined, extra);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as ShownTicket;
    }

    const ticketFile = (id: string) => join(workspace, '.pgagent', 'approvals', `${id}.json`);
    const editTicket = (id: string, edit: (ticket: Record<string, unknown>) => void) => {
      const ticket = JSON.parse(readFileSync(ticketFile(id), 'utf8')) as Record<string, unknown>;
      edit(ticket);
      writeFileSync(ticketFile(id), JSON.stringify(ticket));
    };

    function refused(run: ProcessRun, why: string): void {
      expect(run.code, run.stdout + run.stderr).toBe(4);
      expect(run.stderr).toContain(why);
    }

    async function signedBy(person: 'alice' | 'bob', id: string, extra: Record<string, string> = {}): Promise<void> {
      const run = await onTerminal(person, ['approvals', 'approve', id], [PASS[person]], extra);
      expect(run.code, run.stdout).toBe(0);
    }

    beforeAll(async () => {
      expect(existsSync(CLI), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
      scratch = await createScratchDatabase();
      await execSql(
        scratch.url,
        `CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL); INSERT INTO items VALUES (1, 0), (2, 0);
       CREATE TABLE control (sleep float8 NOT NULL); INSERT INTO control VALUES (0);
       CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep((SELECT sleep FROM control)); RETURN NULL; END $$;
       -- Deferred: it sleeps inside COMMIT, after the executor has done everything else.
       CREATE CONSTRAINT TRIGGER slow_commit AFTER UPDATE ON items DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();`,
      );
      root = mkdtempSync(join(tmpdir(), 'pgagent-signed-'));
      workspace = join(root, 'setup');
      // The admin: a key, the pin (a held write the admin approves and executes), then two approvers enrolled.
      publicKeys.admin = await makeKey('admin', PASS.admin);
      const init = await onTerminal(
        'admin',
        ['policy', 'init', '--admin', 'admin', '--json', '--policy', '{"rolesFor":{"HIGH":["dba"]}}'],
        [PASS.admin],
      );
      expect(init.code, init.stdout).toBe(3);
      const initTicket = /"id":"(tkt_[a-z2-7]{20})"/.exec(init.stdout)?.[1] ?? '';
      expect(await queryValue(scratch.url, "SELECT to_regclass('pgagent.policy_pin') IS NULL")).toBe(true);
      expect((await onTerminal('admin', ['approvals', 'approve', initTicket], [PASS.admin])).code).toBe(0);
      const pinned = await asPerson('admin', ['exec', '--ticket', initTicket]);
      expect(pinned.code, pinned.stderr).toBe(0);
      expect(await queryValue(scratch.url, 'SELECT admin_key FROM pgagent.policy_pin')).toBe(publicKeys.admin);
      for (const person of ['alice', 'bob'] as const) {
        publicKeys[person] = await makeKey(person, PASS[person]);
        const enrolled = await onTerminal(
          'admin',
          ['policy', 'enroll', person, `--key=${publicKeys[person] ?? ''}`, '--roles', 'dba'],
          [PASS.admin],
        );
        expect(enrolled.code, enrolled.stdout).toBe(0);
      }
      expect(await queryValue(scratch.url, 'SELECT version FROM pgagent.policy_pin')).toBe(3);
    }, 120_000);

    afterAll(async () => {
      await scratch?.drop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    beforeEach(async () => {
      workspace = mkdtempSync(join(root, 'ws-'));
      await execSql(scratch.url, 'UPDATE control SET sleep = 0; UPDATE items SET n = 0');
    });

    it('no passphrase on a terminal, no approval: the agent running `approvals approve` (passphrase piped on stdin) is refused', async () => {
      const id = await held();
      const run = await runAsAgent(
        at(['approvals', 'approve', id]),
        personEnv(home('alice'), { USER: 'alice' }),
        `${PASS.alice}\n`,
      );
      refused(run, 'controlling terminal');
      expect((await show(id)).decisions).toEqual([]);
      expect((await agent(['exec', '--ticket', id])).code).not.toBe(0);
      expect(await n()).toBe(0);
    });

    it('on a real terminal the wrong passphrase signs nothing; the right one signs, binds the database and policy version, and runs once (ledger)', async () => {
      const id = await held();
      const wrong = await onTerminal('alice', ['approvals', 'approve', id], ['not-the-passphrase']);
      expect(wrong.code, wrong.stdout).toBe(4);
      expect(wrong.stdout).toContain('Wrong passphrase');
      expect(wrong.stdout).not.toContain('not-the-passphrase');
      expect((await show(id)).decisions).toEqual([]);
      await signedBy('alice', id);
      const decision = (await show(id)).decisions[0];
      expect(decision).toMatchObject({ by: 'alice', approve: true, signed: true, scope: { policyVersion: 3 } });
      expect(decision?.scope?.database).toMatch(/^\d+\/pgagent_test/);
      const ran = await agent(['exec', '--ticket', id]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(await n()).toBe(1);
      expect(await ledger(id)).toBe('done');
      expect(await queryValue(scratch.url, `SELECT sql_hash FROM pgagent.executions WHERE ticket_id = '${id}'`)).toBe(
        (await show(id)).sqlHash,
      );
    });

    it('a copied encrypted key file is useless without the passphrase', async () => {
      const id = await held();
      mkdirSync(join(home('agent'), 'pg-agent', 'keys'), { recursive: true });
      const file = join(home('alice'), 'pg-agent', 'keys', 'alice.key');
      copyFileSync(file, join(home('agent'), 'pg-agent', 'keys', 'alice.key'));
      const text = readFileSync(file, 'utf8');
      expect(text).not.toContain('PRIVATE KEY');
      await expect(openPrivateKey(parseEnvelope(text, file), 'password123', file)).rejects.toThrow('Wrong passphrase');
      refused(await agent(['approvals', 'approve', id, '--key', 'alice']), 'controlling terminal');
      const guessed = await runOnTerminal(
        at(['approvals', 'approve', id, '--key', 'alice']),
        personEnv(home('agent'), { USER: 'agent' }),
        ['password123'],
      );
      expect(guessed.code).toBe(4);
      expect((await show(id)).decisions).toEqual([]);
      expect(await n()).toBe(0);
      rmSync(join(home('agent'), 'pg-agent', 'keys'), { recursive: true, force: true });
    });

    it('self-enrolment: `keys new --roles dba` twice makes keys, never approvers; their signatures do not count and only the admin enrols', async () => {
      const first = await onTerminal(
        'mallory',
        ['keys', 'new', '--name', 'mallory', '--roles', 'dba'],
        [PASS.mallory, PASS.mallory],
      );
      expect(first.code, first.stdout).toBe(0);
      expect(first.stdout).toContain('It is not an approver yet');
      const second = await runOnTerminal(
        at(['keys', 'new', '--name', 'mallory2', '--roles', 'dba']),
        personEnv(home('mallory'), { USER: 'mallory2' }),
        [PASS.mallory, PASS.mallory],
      );
      expect(second.code, second.stdout).toBe(0);
      expect(existsSync(join(workspace, '.pgagent', 'config.json'))).toBe(false);
      const shown = JSON.parse((await agent(['policy', 'show', '--json'])).stdout) as {
        version: number;
        approvers: { name: string }[];
      };
      expect(shown).toMatchObject({ version: 3 });
      expect(shown.approvers.map((a) => a.name).sort()).toEqual(['alice', 'bob']);
      const id = await held();
      for (const key of ['mallory', 'mallory2']) {
        const signed = await onTerminal('mallory', ['approvals', 'approve', id, '--key', key], [PASS.mallory]);
        expect(signed.code, signed.stdout).toBe(0);
      }
      refused(await agent(['exec', '--ticket', id]), 'signed mode');
      expect(await n()).toBe(0);
      // Enrolling itself: mallory holds no admin key.
      const publicKey = /public key:\s+([A-Za-z0-9_-]{43})/.exec(first.stdout)?.[1] ?? '';
      refused(
        await onTerminal(
          'mallory',
          ['policy', 'enroll', 'mallory', `--key=${publicKey}`, '--roles', 'dba'],
          [PASS.mallory],
        ),
        'is the admin key this database pins',
      );
      expect(await queryValue(scratch.url, 'SELECT version FROM pgagent.policy_pin')).toBe(3);
    });

    it('the workspace cannot loosen it: removing or rewriting the workspace policy leaves the pinned one in force', async () => {
      mkdirSync(join(workspace, '.pgagent'), { recursive: true });
      const config = join(workspace, '.pgagent', 'config.json');
      writeFileSync(
        config,
        JSON.stringify({
          approval: {
            approvers: [{ name: 'alice', publicKey: publicKeys.alice, roles: ['dba'] }],
            policy: { requireSignature: true },
          },
        }),
      );
      const id = await held();
      rmSync(config);
      expect((await agent(['approvals', 'approve', id])).code).toBe(0);
      refused(await agent(['exec', '--ticket', id]), "agent's approval (it is not signed)");
      // Listing its own key as an approver in the workspace does not enrol it either.
      const agentKey = await makeKey('agent', 'agent-passphrase');
      writeFileSync(
        config,
        JSON.stringify({
          approval: { autoApproveMaxRisk: 'HIGH', approvers: [{ name: 'agent', publicKey: agentKey, roles: ['dba'] }] },
        }),
      );
      const second = await held();
      expect((await onTerminal('agent', ['approvals', 'approve', second], ['agent-passphrase'])).code).toBe(0);
      refused(await agent(['exec', '--ticket', second]), 'signed mode');
      expect(await n()).toBe(0);
      rmSync(join(home('agent'), 'pg-agent', 'keys'), { recursive: true, force: true });
    });

    it('status replay: an EXECUTED ticket reset to APPROVED by hand is refused by the ledger', async () => {
      const id = await held();
      await signedBy('alice', id);
      expect((await agent(['exec', '--ticket', id])).code).toBe(0);
      editTicket(id, (ticket) => {
        ticket.status = 'APPROVED';
        delete ticket.execution;
      });
      refused(await agent(['exec', '--ticket', id]), 'execution ledger');
      expect(await n()).toBe(1);
      // Nor can the ledger row be removed through SQL: only a superuser dropping the trigger could (the broker's job).
      await expect(execSql(scratch.url, `DELETE FROM pgagent.executions WHERE ticket_id = '${id}'`)).rejects.toThrow(
        'never removed',
      );
    });

    it('a reset while the first execution is committing: the second waits on the ledger and is refused; the write happens once', async () => {
      const id = await held();
      await signedBy('alice', id);
      // The first execution waits inside its COMMIT until the second waits on it: its ledger row exists but is
      // not committed yet. The deferred trigger reads `control`, which this transaction holds locked. (A 3 s
      // pg_sleep there before: on a loaded machine the first finished before the reset, and the ticket then
      // read APPROVED.)
      const holder = new pg.Client({ connectionString: scratch.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE control IN ACCESS EXCLUSIVE MODE');
        const first = agent(['exec', '--ticket', id]);
        const committing = () =>
          (JSON.parse(readFileSync(ticketFile(id), 'utf8')) as { execution?: { undoFile?: string } }).execution
            ?.undoFile !== undefined;
        await expect.poll(committing, { timeout: 60_000, interval: 50 }).toBe(true);
        editTicket(id, (ticket) => {
          ticket.status = 'APPROVED';
          delete ticket.execution;
        });
        // Without the ledger the second would wait for the first's row lock, then update the row a second time.
        const second = agent(['exec', '--ticket', id]);
        // A session waiting on another transaction (not the first's wait on the `control` table).
        const waitingOnTheFirst = () =>
          queryValue(
            scratch.url,
            "SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event <> 'relation'",
          );
        await expect
          .poll(waitingOnTheFirst, { timeout: 60_000, interval: 100, message: 'the second exec waiting on the first' })
          .toBeGreaterThan(0);
        await holder.query('ROLLBACK');
        refused(await second, 'execution ledger');
        expect((await first).code).toBe(0);
      } finally {
        await holder.end();
      }
      expect(await n()).toBe(1);
      expect(
        await queryValue(scratch.url, `SELECT count(*)::int FROM pgagent.executions WHERE ticket_id = '${id}'`),
      ).toBe(1);
      // The refused one recorded nothing: the ticket reads as what happened, from the ledger.
      expect((await show(id)).status).toBe('EXECUTED');
    });

    it('hand-written, rewritten and widened tickets are refused: signatures cover the SQL, the impact bounds and the decision', async () => {
      // Hand-written: an APPROVED ticket with an unsigned decision in alice's name.
      const written = await held();
      editTicket(written, (ticket) => {
        ticket.status = 'APPROVED';
        ticket.decisions = [{ by: 'alice', approve: true, at: new Date().toISOString(), hash: ticket.sqlHash }];
      });
      refused(await agent(['exec', '--ticket', written]), "alice's approval (it is not signed)");
      // Rewritten: alice approved one statement; the agent swaps in another with a consistent hash.
      const rewritten = await held();
      await signedBy('alice', rewritten);
      const other = 'UPDATE items SET n = n + 100 WHERE id = 1';
      const { createHash } = await import('node:crypto');
      const hash = createHash('sha256').update(other, 'utf8').digest('hex');
      editTicket(rewritten, (ticket) => {
        ticket.sql = other;
        ticket.sqlHash = hash;
        (ticket.decisions as { hash: string }[]).forEach((d) => (d.hash = hash));
      });
      refused(await agent(['exec', '--ticket', rewritten]), 'forged or altered');
      // Widened: the SQL kept, the approved impact raised so a bigger change would pass.
      const widened = await held(undefined, 'UPDATE items SET n = n + 1');
      await signedBy('alice', widened);
      editTicket(widened, (ticket) => {
        const impact = ticket.impact as { exactRows: number; tables: { updated: number }[] };
        impact.exactRows = 1000;
        for (const table of impact.tables) table.updated = 1000;
      });
      refused(await agent(['exec', '--ticket', widened]), 'forged or altered');
      expect(await n()).toBe(0);
      expect(
        await queryValue(
          scratch.url,
          'SELECT count(*)::int FROM pgagent.executions WHERE ticket_id = ANY($1)'.replace(
            '$1',
            `ARRAY['${written}','${rewritten}','${widened}']`,
          ),
        ),
      ).toBe(0);
    });

    it('a signature made under an older policy version does not count once the admin signs a new one', async () => {
      const id = await held();
      await signedBy('bob', id);
      const before = Number(await queryValue(scratch.url, 'SELECT version FROM pgagent.policy_pin'));
      const set = await onTerminal(
        'admin',
        ['policy', 'set', '--policy', '{"rolesFor":{"HIGH":["dba"]}}'],
        [PASS.admin],
      );
      expect(set.code, set.stdout).toBe(0);
      refused(await agent(['exec', '--ticket', id]), `signed under policy version ${before}`);
      // Approved again under the version in force now, it runs.
      await signedBy('alice', id);
      expect((await agent(['exec', '--ticket', id])).code).toBe(0);
      expect(await n()).toBe(1);
      // The version only goes up, also by hand.
      await expect(execSql(scratch.url, `UPDATE pgagent.policy_pin SET version = ${before}`)).rejects.toThrow(
        'only goes up',
      );
    });

    it('a statement outside a transaction gets a ledger row before and after, and is not run twice', async () => {
      const id = await held(undefined, 'CREATE INDEX CONCURRENTLY items_n ON items (n)');
      await signedBy('alice', id);
      const ran = await agent(['exec', '--ticket', id]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(await ledger(id)).toBe('done');
      expect(await queryValue(scratch.url, "SELECT count(*)::int FROM pg_indexes WHERE indexname = 'items_n'")).toBe(1);
      editTicket(id, (ticket) => {
        ticket.status = 'APPROVED';
        delete ticket.execution;
      });
      await execSql(scratch.url, 'DROP INDEX items_n');
      refused(await agent(['exec', '--ticket', id]), 'execution ledger');
      expect(await queryValue(scratch.url, "SELECT count(*)::int FROM pg_indexes WHERE indexname = 'items_n'")).toBe(0);
      // Left EXECUTING (as by a crash after it ran): with no transaction id, only the ledger can tell what happened.
      editTicket(id, (ticket) => {
        ticket.status = 'EXECUTING';
        ticket.execution = { xid: 'outside-transaction', by: 'agent', startedAt: new Date().toISOString() };
      });
      expect((await show(id)).status).toBe('EXECUTED');
    });

    describe.runIf(redisAvailable)('tickets in Redis', () => {
      const prefix = `pgagent-signed-${randomBytes(6).toString('hex')}:`;
      const redisEnv = { REDIS_URL, PGAGENT_REDIS_PREFIX: prefix };
      let redis: Redis;
      beforeAll(() => {
        redis = new Redis(REDIS_URL);
      });
      afterAll(async () => {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      });

      it('a Redis SET of a ticket (approved by hand, or reset after execution) is refused', async () => {
        const id = await held(redisEnv);
        const key = `${prefix}ticket:${id}`;
        const ticket = JSON.parse((await redis.get(key)) ?? '{}') as Record<string, unknown>;
        await redis.set(
          key,
          JSON.stringify({
            ...ticket,
            status: 'APPROVED',
            decisions: [{ by: 'alice', approve: true, at: new Date().toISOString(), hash: ticket.sqlHash }],
          }),
        );
        refused(await agent(['exec', '--ticket', id], undefined, redisEnv), "alice's approval (it is not signed)");
        expect(await n()).toBe(0);
        await redis.set(key, JSON.stringify(ticket));
        await signedBy('alice', id, redisEnv);
        expect((await agent(['exec', '--ticket', id], undefined, redisEnv)).code).toBe(0);
        const executed = JSON.parse((await redis.get(key)) ?? '{}') as Record<string, unknown>;
        expect(executed.status).toBe('EXECUTED');
        const { execution: _execution, ...rest } = executed;
        await redis.set(key, JSON.stringify({ ...rest, status: 'APPROVED' }));
        refused(await agent(['exec', '--ticket', id], undefined, redisEnv), 'execution ledger');
        expect(await n()).toBe(1);
      });
    });

    // Last: it edits the pinned policy as the database's superuser (what the agent can do holding that credential).
    it('an altered, or missing, pinned policy stops every execution (exit 4 naming why)', async () => {
      const id = await held();
      await signedBy('alice', id);
      await execSql(
        scratch.url,
        `ALTER TABLE pgagent.policy DISABLE TRIGGER only_forward;
       UPDATE pgagent.policy SET document = replace(document, '"approvers":[', '"approvers":[{"name":"mallory","publicKey":"${publicKeys.alice}","roles":["dba"]},') WHERE version = (SELECT version FROM pgagent.policy_pin)`,
      );
      refused(await agent(['exec', '--ticket', id]), 'not signed by the pinned admin key');
      await execSql(scratch.url, 'DELETE FROM pgagent.policy WHERE version = (SELECT version FROM pgagent.policy_pin)');
      refused(await agent(['exec', '--ticket', id]), 'is missing from pgagent.policy');
      expect(await n()).toBe(0);
    });
  },
);
