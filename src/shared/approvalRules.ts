/**
 * The team's approval rules as `.pgagent/config.json` and the signed policy spell them (SPEC §5 3a): plain data,
 * read by the config loader and judged by `core/approvals/approvalPolicy.ts`.
 */
import type { Risk } from './impactReport';

export interface Approver {
  name: string;
  /** Ed25519 public key, base64url of its 32 bytes. */
  publicKey: string;
  roles: string[];
}

export interface ApprovalPolicy {
  /** Only approvals signed by a key in `approvers` count. */
  requireSignature?: boolean;
  /** Tickets of a risk above this need two distinct approvers ("none": every ticket). */
  twoPersonAbove?: Risk | 'none';
  /** Above this risk the requester's own approval does not count ("none": never). */
  noSelfApprovalAbove?: Risk | 'none';
  /** A ticket of this risk needs an approver with one of these roles. */
  rolesFor?: Partial<Record<Risk, string[]>>;
  /**
   * The recovery window of destructive DDL (issue 25). Honoured only from the signed policy pinned in the
   * database (signed mode); a config file's approval.policy has no such key.
   */
  recovery?: { enabled?: boolean; maxCopyBytes?: number; retentionDays?: number };
}

export interface ApprovalRules {
  approvers: Approver[];
  policy: ApprovalPolicy;
  /** Per connection (ticket connection key or profile name), replacing the keys of `policy` it sets. */
  connections?: Record<string, ApprovalPolicy>;
}
