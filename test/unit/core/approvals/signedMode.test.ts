// Signed mode's pure parts (SPEC §5 3a): the passphrase envelope of a key, the admin-signed policy document and
// which decisions the executor counts on a pinned database — real Ed25519 keys, real scrypt and AES-GCM.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  publicKeyText,
  scopedDecisionPayload,
  signScopedDecision,
} from '../../../../src/core/approvals/decisionSignature';
import { openPrivateKey, parseEnvelope, sealPrivateKey } from '../../../../src/core/approvals/keyEnvelope';
import {
  POLICY_DOCUMENT_FORMAT,
  signPolicy,
  verifyPolicy,
  withApprover,
} from '../../../../src/core/approvals/policyDocument';
import type { PolicyDocument } from '../../../../src/core/approvals/policyDocument';
import type { SignedMode } from '../../../../src/core/approvals/signedMode';
import { authorizeSigned } from '../../../../src/core/approvals/signedMode';
import type { DecisionScope, Ticket, TicketDecision } from '../../../../src/core/approvals/ticket';
import { impactReport } from '../../../support/impactReports';
import { approvedTicket } from '../../../support/tickets';

const admin = generateKeyPairSync('ed25519');
const alice = generateKeyPairSync('ed25519');
const DB = '7712163443514398832/shop';
const HASH = 'a'.repeat(64);
const NOW = new Date('2026-01-01T01:00:00.000Z');
const at = '2026-01-01T00:30:00.000Z';

const ticket = (decisions: TicketDecision[]): Ticket =>
  approvedTicket(decisions, {
    impact: impactReport({
      estimatedRows: 1,
      exactRows: 1,
      tables: [{ schema: 'public', name: 'items', via: 'direct', inserted: 0, updated: 1, deleted: 0 }],
    }),
  });

function document(version: number): PolicyDocument {
  return {
    format: POLICY_DOCUMENT_FORMAT,
    database: DB,
    version,
    approvers: [{ name: 'alice', publicKey: publicKeyText(alice.privateKey), roles: ['dba'] }],
    policy: { requireSignature: true },
    signedAt: at,
  };
}

const mode = (version = 2): SignedMode => ({
  identity: { systemIdentifier: '7712163443514398832', database: 'shop', key: DB },
  pinned: {
    rules: { approvers: document(version).approvers, policy: { requireSignature: true } },
    adminKey: publicKeyText(admin.privateKey),
    version,
    document: document(version),
  },
});

function signedDecision(scope: DecisionScope, signingTicket: Ticket = ticket([]), when = at): TicketDecision {
  return {
    by: 'alice',
    approve: true,
    at: when,
    hash: HASH,
    signature: {
      keyName: 'alice',
      value: signScopedDecision(alice.privateKey, signingTicket, HASH, true, when, scope),
      scope,
    },
  };
}

describe('a key encrypted with a passphrase', () => {
  it('opens with the right passphrase only, and any edit of the file is detected', async () => {
    const text = await sealPrivateKey('alice', alice.privateKey, 'a long passphrase');
    expect(text).not.toContain('PRIVATE KEY');
    const envelope = parseEnvelope(text, 'alice.key');
    const opened = await openPrivateKey(envelope, 'a long passphrase', 'alice.key');
    expect(publicKeyText(opened)).toBe(publicKeyText(alice.privateKey));
    await expect(openPrivateKey(envelope, 'a long passphrasE', 'alice.key')).rejects.toMatchObject({
      code: 'APPROVAL_POLICY',
    });
    // Swapping in another public key (so the file claims to be someone else's) breaks the authenticated data.
    await expect(
      openPrivateKey({ ...envelope, publicKey: publicKeyText(admin.privateKey) }, 'a long passphrase', 'alice.key'),
    ).rejects.toThrow('Wrong passphrase');
    // A weakened key derivation is refused before any work is done.
    await expect(
      openPrivateKey({ ...envelope, kdf: { ...envelope.kdf, N: 1024 } }, 'a long passphrase', 'alice.key'),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('refuses a short passphrase', async () => {
    await expect(sealPrivateKey('alice', alice.privateKey, 'short')).rejects.toMatchObject({ code: 'BAD_INPUT' });
  });
});

describe('the admin-signed policy document', () => {
  const adminKey = publicKeyText(admin.privateKey);

  it('verifies as signed, for its own database only', () => {
    const signed = signPolicy(admin.privateKey, document(1));
    expect(verifyPolicy(signed, adminKey, DB).approvers.map((a) => a.name)).toEqual(['alice']);
    expect(() => verifyPolicy(signed, adminKey, '1/other')).toThrow('signed for the database');
  });

  it('refuses an altered document, another signer and a version that does not match its row', () => {
    const signed = signPolicy(admin.privateKey, document(1));
    expect(() =>
      verifyPolicy({ ...signed, document: signed.document.replace('"dba"', '"dba","admin"') }, adminKey, DB),
    ).toThrow('not signed by the pinned admin key');
    expect(() => verifyPolicy(signPolicy(alice.privateKey, document(1)), adminKey, DB)).toThrow(
      'not signed by the pinned admin key',
    );
    expect(() => verifyPolicy({ ...signed, version: 2 }, adminKey, DB)).toThrow('says it is version 1');
  });

  it('enrolment makes the next version', () => {
    const next = withApprover(document(1), { name: 'bob', publicKey: adminKey, roles: [] }, NOW);
    expect(next.version).toBe(2);
    expect(next.approvers.map((a) => a.name)).toEqual(['alice', 'bob']);
  });
});

describe('which decisions count on a pinned database', () => {
  const authorize = (decisions: TicketDecision[], version = 2) =>
    authorizeSigned(mode(version), () => NOW)(ticket(decisions));

  it('a signature scoped to this database and policy version counts', () => {
    expect(authorize([signedDecision({ database: DB, policyVersion: 2 })])).toBeUndefined();
  });

  it('unsigned, unscoped, another database, another policy version or an old signature do not', () => {
    const unsigned: TicketDecision = { by: 'alice', approve: true, at, hash: HASH };
    expect(authorize([unsigned])?.message).toContain('it is not signed');
    const unscoped = { ...signedDecision({ database: DB, policyVersion: 2 }) };
    expect(
      authorize([{ ...unscoped, signature: { keyName: 'alice', value: unscoped.signature?.value ?? '' } }])?.message,
    ).toContain('does not cover the database');
    expect(authorize([signedDecision({ database: '1/shop', policyVersion: 2 })])?.message).toContain(
      'signed for the database 1/shop',
    );
    expect(authorize([signedDecision({ database: DB, policyVersion: 1 })])?.message).toContain(
      'signed under policy version 1',
    );
    expect(
      authorize([signedDecision({ database: DB, policyVersion: 2 }, ticket([]), '2025-12-30T00:00:00.000Z')])?.message,
    ).toContain("outside a ticket's lifetime");
  });

  it('a signature over other impact bounds is refused as altered', () => {
    const other = ticket([]);
    other.impact = {
      ...other.impact,
      tables: [{ schema: 'public', name: 'items', via: 'direct', inserted: 0, updated: 500, deleted: 0 }],
    };
    expect(authorize([signedDecision({ database: DB, policyVersion: 2 }, other)])?.message).toContain(
      'forged or altered',
    );
  });

  it('the signed bytes name every bound', () => {
    const payload = JSON.parse(
      scopedDecisionPayload(ticket([]), HASH, true, at, { database: DB, policyVersion: 2 }).toString('utf8'),
    ) as Record<string, unknown>;
    expect(Object.keys(payload).sort()).toEqual([
      'at',
      'database',
      'decision',
      'exactRows',
      'hash',
      'kind',
      'policyVersion',
      'risk',
      'tables',
      'ticket',
      'v',
    ]);
  });
});
