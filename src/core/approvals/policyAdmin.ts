/**
 * An admin's acts on a pinned policy (SPEC §5 3a): the first signed document and the SQL that pins it (held
 * for approval like any write), and each later version — an enrolment, a role change, a policy change — signed
 * with the pinned admin key and written straight to pgagent.policy. The document is signed, so writing it needs
 * no approval of its own; the version only goes up (checked here, and by the schema's trigger).
 */
import type { KeyObject } from 'node:crypto';
import type { Db } from '../db/db';
import { databaseIdentity } from '../db/databaseIdentity';
import { AgentError } from '../platform/errors';
import type { ApprovalPolicy } from './approvalPolicy';
import { publicKeyText } from './decisionSignature';
import { initSchemaSql } from './pgagentSchema';
import type { PinnedPolicy } from './pinnedPolicy';
import { readPinnedPolicy } from './pinnedPolicy';
import type { PolicyDocument } from './policyDocument';
import { POLICY_DOCUMENT_FORMAT, signPolicy } from './policyDocument';

/** The SQL of `policy init`: the schema and the first version (no approvers yet; signatures required). */
export async function initPolicySql(
  db: Db,
  adminKey: KeyObject,
  policy: ApprovalPolicy,
  now = new Date(),
): Promise<{ sql: string; database: string }> {
  const identity = await db.withSession((session) => databaseIdentity(session));
  const already = await db.withSession((session) => readPinnedPolicy(session, identity));
  if (already)
    throw new AgentError(
      'BAD_INPUT',
      `This database already pins a signed policy (version ${already.version}).`,
      'Change it with `pg-agent policy enroll` or `pg-agent policy set`.',
    );
  const first: PolicyDocument = {
    format: POLICY_DOCUMENT_FORMAT,
    database: identity.key,
    version: 1,
    approvers: [],
    policy: { ...policy, requireSignature: true },
    signedAt: now.toISOString(),
  };
  return { sql: initSchemaSql(publicKeyText(adminKey), signPolicy(adminKey, first)), database: identity.key };
}

export async function currentPinned(db: Db): Promise<PinnedPolicy | undefined> {
  return db.withSession(async (session) => readPinnedPolicy(session, await databaseIdentity(session)));
}

/**
 * Writes the next version, built from the verified current one, in one transaction that holds the pin's row:
 * two admins at once cannot both write version N+1.
 */
export async function writeNextPolicy(
  db: Db,
  adminKey: KeyObject,
  next: (current: PolicyDocument) => PolicyDocument,
): Promise<PinnedPolicy> {
  return db.withSession(async (session) => {
    await session.query('BEGIN');
    try {
      await session.query('SELECT version FROM pgagent.policy_pin FOR UPDATE');
      const identity = await databaseIdentity(session);
      const current = await readPinnedPolicy(session, identity);
      if (!current)
        throw new AgentError(
          'BAD_INPUT',
          'This database pins no signed policy yet.',
          'Pin one first: `pg-agent policy init --admin KEY` (a held write a person approves).',
        );
      if (publicKeyText(adminKey) !== current.adminKey) {
        throw new AgentError(
          'APPROVAL_POLICY',
          'That key is not the admin key this database pins: only the admin signs a new policy version.',
          "`pg-agent policy show` names the pinned admin key's fingerprint.",
        );
      }
      const document = next(current.document);
      if (document.version !== current.version + 1)
        throw new AgentError('INTERNAL', 'A new policy version must follow the current one.');
      const signed = signPolicy(adminKey, document);
      await session.query('INSERT INTO pgagent.policy (version, document, signature) VALUES ($1, $2, $3)', [
        signed.version,
        signed.document,
        signed.signature,
      ]);
      await session.query('UPDATE pgagent.policy_pin SET version = $1', [signed.version]);
      const written = await readPinnedPolicy(session, identity);
      await session.query('COMMIT');
      if (!written) throw new AgentError('INTERNAL', 'The policy just written cannot be read back.');
      return written;
    } catch (error) {
      await session.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
