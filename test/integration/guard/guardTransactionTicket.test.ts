// A client transaction through `pg-agent guard` is a ticket of its own origin (issue 24 P4), not a SQL comment:
// its statements (each with its values and template, in order) and measured effects are kept by both stores
// (files, Redis), covered by the hash every decision names and every signature covers, and refused by the
// executor (a replay of its recorded values would be wrong). Old tickets without the field are statements.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decideTicket } from '../../../src/core/approvals/approvalPath';
import { signatureState } from '../../../src/core/approvals/approvalPolicy';
import { publicKeyText } from '../../../src/core/approvals/decisionSignature';
import type { GuardTransactionRecord, Ticket } from '../../../src/core/approvals/ticket';
import { isGuardTransaction, sqlHash, ticketHash, transactionSql } from '../../../src/core/approvals/ticket';
import type { NewTicket, TicketStore } from '../../../src/core/approvals/ticketStore';
import type { Db } from '../../../src/core/db/db';
import { AgentError } from '../../../src/core/platform/errors';
import { silentLogger } from '../../../src/core/platform/logger';
import { executeApproved } from '../../../src/core/sql/executeApproved';
import type { ImpactReport } from '../../../src/shared/impactReport';
import { redisAvailable } from '../../support/services';
import { impactReport } from '../../support/impactReports';
import type { StoreHarness } from '../../support/ticketStoreHarness';
import { fileStoreHarness, redisStoreHarness, storesOn } from '../../support/ticketStoreHarness';

const CONNECTION = 'postgres://app@db:5432/shop';
const CLAIM = { connection: CONNECTION, xid: '1000', by: 'guard' };
const RECORD: GuardTransactionRecord = {
  statements: [
    { sql: "INSERT INTO orders (customer) VALUES ('ann') RETURNING id", template: 'w:aaaa', read: false },
    { sql: "UPDATE orders SET note = 'paid' WHERE id = '41'", template: 'w:bbbb', read: false },
  ],
  effects: [{ schema: 'public', name: 'orders', inserted: 1, updated: 1, deleted: 0 }],
};
const alice = generateKeyPairSync('ed25519');
const SCOPE = { database: '7712163443514398832/shop', policyVersion: 0 };

function impact(): ImpactReport {
  return impactReport({
    statements: RECORD.statements.map((s) => s.sql),
    estimatedRows: null,
    exactRows: 2,
    tables: [{ schema: 'public', name: 'orders', via: 'direct', inserted: 1, updated: 1, deleted: 0 }],
    previewMs: 3,
  });
}

function transactionTicket(record: GuardTransactionRecord = RECORD): NewTicket {
  return {
    sql: transactionSql(record.statements),
    origin: 'guardTransaction',
    transaction: record,
    connection: CONNECTION,
    impact: impact(),
    createdBy: 'guard user alice',
  };
}

async function errorOf(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AgentError)) throw new Error(`expected an AgentError, got ${String(error)}`);
  return error;
}

function describeStore(name: string, enabled: boolean, makeHarness: () => Promise<StoreHarness>): void {
  describe.runIf(enabled)(`a guard transaction ticket in the ${name} store`, () => {
    let harness: StoreHarness;
    let store: TicketStore;
    const { open, setUp, tearDown } = storesOn(makeHarness);

    beforeEach(async () => ({ harness, store } = await setUp()));
    afterEach(() => tearDown());

    it('keeps its origin, statements and effects; its hash covers them; another store reads it the same', async () => {
      const created = await store.create(transactionTicket());
      expect(created).toMatchObject({
        origin: 'guardTransaction',
        transaction: RECORD,
        sql: `${RECORD.statements[0]!.sql};\n${RECORD.statements[1]!.sql};`,
      });
      expect(created.sqlHash).toBe(ticketHash(created));
      expect(created.sqlHash).not.toBe(sqlHash(created.sql));
      const read = await (await open()).get(created.id);
      expect(read).toEqual(created);
      expect(read && isGuardTransaction(read)).toBe(true);
      expect(await harness.raw(created.id)).toMatchObject({
        origin: 'guardTransaction',
        transaction: { statements: RECORD.statements },
      });
      // Approved on what the person saw (the hash of the whole transaction), then claimed once.
      await store.decide(created.id, { approve: true, by: 'bob', seenHash: ticketHash(created) });
      expect((await store.claim(created.id, CLAIM)).status).toBe('EXECUTING');
    });

    it('reads a ticket stored without the field as a statement ticket', async () => {
      const created = await store.create({
        sql: 'DELETE FROM orders WHERE id = 1',
        connection: CONNECTION,
        impact: impact(),
        createdBy: 'dev',
      });
      expect(await harness.raw(created.id)).not.toHaveProperty('origin');
      const read = await store.get(created.id);
      expect(read && isGuardTransaction(read)).toBe(false);
      expect(read?.sqlHash).toBe(sqlHash('DELETE FROM orders WHERE id = 1'));
      await store.decide(created.id, { approve: true, by: 'bob' });
      expect((await store.claim(created.id, CLAIM)).status).toBe('EXECUTING');
    });

    it('refuses the claim once the statement list, the effects or the origin changed after the approval, rehashed or not', async () => {
      const edits: [string, (t: Record<string, unknown> & Ticket) => void][] = [
        ['a statement edited', (t) => (t.transaction!.statements[1]!.sql = 'UPDATE orders SET note = NULL')],
        ['a template edited', (t) => (t.transaction!.statements[1]!.template = 'w:cccc')],
        ['the order changed', (t) => t.transaction!.statements.reverse()],
        ['the effects raised', (t) => (t.transaction!.effects[0]!.updated = 1000)],
        ['the SQL shown changed', (t) => (t.sql = 'SELECT 1;')],
        [
          'passed off as a statement',
          (t) => {
            delete t.origin;
            delete t.transaction;
          },
        ],
      ];
      for (const [what, edit] of edits) {
        const ticket = await store.create(transactionTicket());
        await store.decide(ticket.id, { approve: true, by: 'bob' });
        await harness.tamper(ticket.id, edit);
        expect((await errorOf(store.claim(ticket.id, CLAIM))).code, what).toBe('APPROVAL_SQL_MISMATCH');
        // The hash rewritten to fit: the approval names the old one, so it approves nothing here.
        await harness.tamper(ticket.id, (t) => (t.sqlHash = ticketHash(t)));
        expect((await errorOf(store.claim(ticket.id, CLAIM))).code, `${what}, rehashed`).toBe('APPROVAL_SQL_MISMATCH');
        expect((await store.get(ticket.id))?.status).toBe('APPROVED');
      }
    });

    it('a signed approval covers the origin and the statement list: any edit after signing makes it forged', async () => {
      const approvers = [{ name: 'alice', publicKey: publicKeyText(alice.privateKey), roles: [] }];
      for (const scope of [SCOPE, undefined]) {
        const ticket = await store.create(transactionTicket());
        const decided = await decideTicket(store, ticket.id, {
          approve: true,
          key: { name: 'alice', privateKey: alice.privateKey },
          ...(scope ? { scope } : {}),
        });
        expect(signatureState(decided, decided.decisions[0]!, approvers)).toBe('verified');
        // An agent rewrites the list and every hash on the ticket to match it: the signature does not follow.
        const edited = structuredClone(decided);
        edited.transaction!.statements[1]!.sql = "UPDATE orders SET note = 'paid'";
        edited.sql = transactionSql(edited.transaction!.statements);
        edited.sqlHash = ticketHash(edited);
        edited.decisions[0]!.hash = edited.sqlHash;
        expect(signatureState(edited, edited.decisions[0]!, approvers)).toBe('forged');
        const statement = structuredClone(decided);
        delete statement.origin;
        delete statement.transaction;
        statement.sqlHash = ticketHash(statement);
        statement.decisions[0]!.hash = statement.sqlHash;
        expect(signatureState(statement, statement.decisions[0]!, approvers)).toBe('forged');
      }
    });

    it('is never run by the executor (exec, execute_approved): a replay of its recorded values would be wrong', async () => {
      const ticket = await store.create(transactionTicket());
      await store.decide(ticket.id, { approve: true, by: 'bob' });
      const refused = await errorOf(
        executeApproved({} as Db, store, ticket.id, {
          connection: CONNECTION,
          by: 'dev',
          logger: silentLogger,
        } as unknown as Parameters<typeof executeApproved>[3]),
      );
      expect(refused.code).toBe('SQL_REFUSED');
      expect(refused.message).toContain('holds a client transaction through pg-agent guard');
      expect((await store.get(ticket.id))?.status).toBe('APPROVED');
    });

    it('refuses to create a transaction ticket whose SQL is not its statements, or statements without the origin', async () => {
      expect((await errorOf(store.create({ ...transactionTicket(), sql: 'SELECT 1;' }))).code).toBe('INTERNAL');
      expect((await errorOf(store.create({ ...transactionTicket(), origin: 'statement' }))).code).toBe('INTERNAL');
      expect(
        (
          await errorOf(
            store.create({ ...transactionTicket(), transaction: { statements: [], effects: [] }, sql: ';' }),
          )
        ).code,
      ).toBe('INTERNAL');
    });
  });
}

describeStore('file', true, () => fileStoreHarness('pgagent-guard-tx-tickets-'));
describeStore('Redis', redisAvailable, redisStoreHarness);
