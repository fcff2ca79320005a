/**
 * The stricter of two approval policies, field by field (SPEC §5 3a: a workspace only tightens). Used to
 * show the policy in force as one and to name what a workspace tried to loosen; the executor itself checks
 * every source's policy against that source's own approvers (policyInForce.ts), so nothing is lost here.
 */
import type { Risk } from '../../shared/impactReport';
import { RISK_ORDER } from '../../shared/impactReport';
import type { ApprovalPolicy } from './approvalPolicy';

type Level = Risk | 'none' | undefined;

/** How strict "above this level" is: 'none' (every ticket) is strictest, undefined (never) loosest. */
function strictness(level: Level): number {
  if (level === undefined) return 0;
  if (level === 'none') return RISK_ORDER.length + 1;
  return RISK_ORDER.length - RISK_ORDER.indexOf(level);
}

export function stricterLevel(a: Level, b: Level): Level {
  return strictness(b) > strictness(a) ? b : a;
}

/**
 * Roles for one risk: where both name roles, an approver must hold a role both accept (the intersection);
 * when none would, the first policy's list stands here and the other's is still checked as its own layer.
 */
function stricterRoles(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
  if (!a?.length) return b?.length ? [...b] : undefined;
  if (!b?.length) return [...a];
  const both = a.filter((r) => b.includes(r));
  return both.length > 0 ? both : [...a];
}

export function strictestPolicy(a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy {
  const result: ApprovalPolicy = {};
  if (a.requireSignature || b.requireSignature) result.requireSignature = true;
  const two = stricterLevel(a.twoPersonAbove, b.twoPersonAbove);
  if (two !== undefined) result.twoPersonAbove = two;
  const self = stricterLevel(a.noSelfApprovalAbove, b.noSelfApprovalAbove);
  if (self !== undefined) result.noSelfApprovalAbove = self;
  const rolesFor: Partial<Record<Risk, string[]>> = {};
  for (const risk of RISK_ORDER) {
    const roles = stricterRoles(a.rolesFor?.[risk], b.rolesFor?.[risk]);
    if (roles) rolesFor[risk] = roles;
  }
  if (Object.keys(rolesFor).length > 0) result.rolesFor = rolesFor;
  return result;
}

/** The fields of `wanted` that ask for less than `floor` does ("approval.policy.requireSignature"), for warnings. */
export function looserFields(wanted: ApprovalPolicy, floor: ApprovalPolicy): (keyof ApprovalPolicy)[] {
  const looser: (keyof ApprovalPolicy)[] = [];
  if (floor.requireSignature && wanted.requireSignature === false) looser.push('requireSignature');
  if ('twoPersonAbove' in wanted && strictness(wanted.twoPersonAbove) < strictness(floor.twoPersonAbove))
    looser.push('twoPersonAbove');
  if ('noSelfApprovalAbove' in wanted && strictness(wanted.noSelfApprovalAbove) < strictness(floor.noSelfApprovalAbove))
    looser.push('noSelfApprovalAbove');
  return looser;
}
