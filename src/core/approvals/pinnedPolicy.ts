/**
 * The signed policy pinned in the database itself (SPEC §5 3a, signed mode): the approval policy and approver
 * list as a document signed by an admin key whose fingerprint the database pins, so that an agent with a shell
 * as the same OS user can neither remove nor loosen it. (Seam: the signed-mode work fills this in.)
 */
import type { DbSession } from '../db/db';
import type { DatabaseIdentity } from '../db/databaseIdentity';
import type { ApprovalRules } from './approvalPolicy';

export interface PinnedPolicy {
  rules: ApprovalRules;
  /** The pinned admin key (base64url Ed25519 public key) that signed the document. */
  adminKey: string;
  /** Increases with every signed change; decisions sign the version they were made under. */
  version: number;
}

/**
 * The verified policy pinned for this database, or undefined when none is pinned. Throws AgentError
 * (APPROVAL_POLICY) when a pin exists but the document is missing, altered or not signed by the pinned key.
 */
export function readPinnedPolicy(session: DbSession, identity: DatabaseIdentity): Promise<PinnedPolicy | undefined> {
  void session;
  void identity;
  return Promise.resolve(undefined);
}
