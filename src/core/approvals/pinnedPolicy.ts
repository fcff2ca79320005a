/**
 * The signed policy pinned in the database itself (SPEC §5 3a, signed mode): the approval policy and approver
 * list as a document signed by an admin key whose public key the database pins (pgagent.policy_pin, made by
 * `pg-agent policy init` through the approval path), so that an agent with a shell as the same OS user can
 * neither remove nor loosen it from the workspace. Read afresh at every execution.
 */
import type { DbSession } from '../db/db';
import type { DatabaseIdentity } from '../db/databaseIdentity';
import { AgentError } from '../platform/errors';
import type { ApprovalRules } from './approvalPolicy';
import { SCHEMA_PRESENCE_SQL } from './pgagentSchema';
import type { PolicyDocument } from './policyDocument';
import { verifyPolicy } from './policyDocument';

export interface PinnedPolicy {
  rules: ApprovalRules;
  /** The pinned admin key (base64url Ed25519 public key) that signed the document. */
  adminKey: string;
  /** Increases with every signed change; decisions sign the version they were made under. */
  version: number;
  /** The verified document itself (what the next signed version is built from). */
  document: PolicyDocument;
}

function broken(why: string): AgentError {
  return new AgentError(
    'APPROVAL_POLICY',
    `This database has the pgagent schema of signed mode, but ${why}: nothing runs until that is mended.`,
    'Ask the admin who pinned it (`pg-agent policy show` says what is there); the pin and the policy are never removed by pg-agent.',
  );
}

/**
 * The verified policy pinned for this database, or undefined when none is pinned (no pgagent schema). Throws
 * AgentError (APPROVAL_POLICY) when a pin exists but the document is missing, altered or not signed by the
 * pinned key, or was signed for another database.
 */
export async function readPinnedPolicy(
  session: DbSession,
  identity: DatabaseIdentity,
): Promise<PinnedPolicy | undefined> {
  const presence = await session.query<{ pinned: boolean }>(SCHEMA_PRESENCE_SQL);
  if (!presence.rows[0]?.pinned) return undefined;
  const pins = await session.query<{ admin_key: string; version: number }>(
    'SELECT admin_key, version FROM pgagent.policy_pin',
  );
  const pin = pins.rows[0];
  if (!pin || pins.rows.length !== 1) throw broken('its pin (pgagent.policy_pin) is missing');
  const stored = await session.query<{ version: number; document: string; signature: string }>(
    'SELECT version, document, signature FROM pgagent.policy WHERE version = $1',
    [pin.version],
  );
  const row = stored.rows[0];
  if (!row) throw broken(`the policy version ${pin.version} its pin names is missing from pgagent.policy`);
  const document = verifyPolicy(
    { version: Number(row.version), document: row.document, signature: row.signature },
    pin.admin_key,
    identity.key,
  );
  return {
    // Signed mode: only signed approvals count, whatever the document says.
    rules: { approvers: document.approvers, policy: { ...document.policy, requireSignature: true } },
    adminKey: pin.admin_key,
    version: document.version,
    document,
  };
}
