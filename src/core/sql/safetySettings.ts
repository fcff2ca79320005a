/** The limits and policy the safety path applies, with the defaults a new user gets. */
import type { ApprovalRules } from '../approvals/approvalPolicy';
import type { PolicySources } from '../approvals/policyInForce';
import type { RiskPolicy } from './risk';
import { DEFAULT_RISK_POLICY } from './risk';

export interface SafetySettings {
  maxRows: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  previewTimeoutMs: number;
  /** Extra share of approved rows an execution may change before it is rolled back (data changed since review). */
  tolerance: number;
  policy: RiskPolicy;
  /** Who may approve (approval.approvers / approval.policy in .pgagent/config.json); absent: any approval counts. */
  approvalRules?: ApprovalRules;
  /** Where executors read the policy in force at claim time (policyInForce.ts); without it, approvalRules. */
  policySources?: PolicySources;
}

export const DEFAULT_SAFETY: SafetySettings = {
  maxRows: 1000,
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 5_000,
  previewTimeoutMs: 10_000,
  tolerance: 0.1,
  policy: DEFAULT_RISK_POLICY,
};
