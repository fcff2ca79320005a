/** The limits and policy the safety path applies, with the defaults a new user gets. */
import type { ApprovalRules } from '../approvals/approvalPolicy';
import type { PolicySources } from '../approvals/policyInForce';
import type { RiskPolicy } from './risk';
import type { QueryHistory } from './history/queryHistory';
import { DEFAULT_RISK_POLICY } from './risk';

export interface SafetySettings {
  maxRows: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  previewTimeoutMs: number;
  /**
   * Approved DDL and maintenance (SPEC §5.6, issue 25): how long one try waits for its table locks, and how
   * many tries (with growing pauses between them) before it stops without running. Short, because while a
   * lock request waits, every later reader or writer of the table waits behind it.
   */
  ddlLockTimeoutMs: number;
  ddlLockAttempts: number;
  /** The way back from destructive DDL (issue 25): quarantine instead of DROP, copies before DROP COLUMN and TRUNCATE. */
  recovery?: RecoverySettings;
  /**
   * A guard transaction's approved retry may carry a fresh random UUID or the current time where its measured
   * run had one (guard/transaction/varyingValues.ts); absent: on. Off only stricter (identical values).
   */
  guardVolatileValues?: boolean;
  /** Extra share of approved rows an execution may change before it is rolled back (data changed since review). */
  tolerance: number;
  policy: RiskPolicy;
  /** Who may approve (approval.approvers / approval.policy in .pgagent/config.json); absent: any approval counts. */
  approvalRules?: ApprovalRules;
  /** Where executors read the policy in force at claim time (policyInForce.ts); without it, approvalRules. */
  policySources?: PolicySources;
  /** Where reads and executed writes are recorded (`.pgagent/history/`), bound to the surface and person. */
  history?: QueryHistory;
}

export interface RecoverySettings {
  /** On by default; a person turns it off in their own config only (a workspace cannot loosen it). */
  enabled: boolean;
  /** Above this many bytes a copy is not made, and the impact says there is no way back. */
  maxCopyBytes: number;
  /** How long quarantined data is kept before `pg-agent quarantine purge` drops it. */
  retentionDays: number;
}

export const DEFAULT_RECOVERY: RecoverySettings = { enabled: true, maxCopyBytes: 256 * 1024 * 1024, retentionDays: 7 };

export const DEFAULT_SAFETY: SafetySettings = {
  maxRows: 1000,
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 5_000,
  previewTimeoutMs: 10_000,
  ddlLockTimeoutMs: 100,
  ddlLockAttempts: 10,
  recovery: DEFAULT_RECOVERY,
  tolerance: 0.1,
  policy: DEFAULT_RISK_POLICY,
};
