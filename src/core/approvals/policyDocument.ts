/**
 * The signed policy document of signed mode (SPEC §5 3a): the approver list and the approval policy of one
 * database, with a version that only goes up, signed by the admin key whose public key the database pins
 * (pgagent.policy_pin). Its text is stored byte for byte and the signature covers those bytes; it is parsed only
 * after the signature verified.
 */
import { createHash, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import type { ApprovalPolicy, Approver } from './approvalPolicy';
import { publicKeyFrom } from './decisionSignature';
import { KEY_NAME_PATTERN } from './keyFiles';

export const POLICY_DOCUMENT_FORMAT = 'pg-agent-policy/1';

const riskOrNone = z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL', 'none']);
export const approvalPolicySchema = z.strictObject({
  requireSignature: z.boolean().optional(),
  twoPersonAbove: riskOrNone.optional(),
  noSelfApprovalAbove: riskOrNone.optional(),
  rolesFor: z.partialRecord(z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']), z.array(z.string())).optional(),
  /** The recovery window of destructive DDL for this database (issue 25); only a signed document may turn it off. */
  recovery: z
    .strictObject({
      enabled: z.boolean(),
      maxCopyBytes: z.number().int().min(0),
      retentionDays: z.number().int().min(0).max(3650),
    })
    .partial()
    .optional(),
});

const documentSchema = z.strictObject({
  format: z.literal(POLICY_DOCUMENT_FORMAT),
  /** databaseIdentity().key of the one database this document governs. */
  database: z.string(),
  version: z.number().int().positive(),
  approvers: z.array(
    z.strictObject({ name: z.string().regex(KEY_NAME_PATTERN), publicKey: z.string(), roles: z.array(z.string()) }),
  ),
  policy: approvalPolicySchema,
  signedAt: z.iso.datetime(),
});

export type PolicyDocument = z.infer<typeof documentSchema>;

export interface SignedPolicy {
  version: number;
  /** The exact text signed. */
  document: string;
  /** Ed25519 over the document's UTF-8 bytes, base64url. */
  signature: string;
}

/** sha256 of the admin's raw public key, shown to people so they can compare it with what the admin says. */
export function keyFingerprint(publicKey: string): string {
  return `sha256:${createHash('sha256').update(Buffer.from(publicKey, 'base64url')).digest('hex').slice(0, 32)}`;
}

export function signPolicy(adminKey: KeyObject, document: PolicyDocument): SignedPolicy {
  const parsed = documentSchema.parse(document);
  const text = JSON.stringify(parsed);
  return {
    version: parsed.version,
    document: text,
    signature: sign(null, Buffer.from(text, 'utf8'), adminKey).toString('base64url'),
  };
}

function altered(why: string): AgentError {
  return new AgentError(
    'APPROVAL_POLICY',
    `This database is pinned to a signed approval policy (schema pgagent), and ${why}: nothing runs until that is mended.`,
    'Ask the admin who pinned it to sign the policy again (`pg-agent policy enroll` or `pg-agent policy set`); `pg-agent policy show` says what is there.',
  );
}

/** The verified document; throws APPROVAL_POLICY when it is not exactly what the pinned admin key signed for this database. */
export function verifyPolicy(signed: SignedPolicy, adminKey: string, database: string): PolicyDocument {
  let valid = false;
  try {
    valid = verify(
      null,
      Buffer.from(signed.document, 'utf8'),
      publicKeyFrom(adminKey),
      Buffer.from(signed.signature, 'base64url'),
    );
  } catch {
    valid = false;
  }
  if (!valid)
    throw altered(
      `its policy version ${signed.version} is not signed by the pinned admin key ${keyFingerprint(adminKey)} (altered or forged)`,
    );
  let json: unknown;
  try {
    json = JSON.parse(signed.document);
  } catch {
    throw altered(`its policy version ${signed.version} is not a policy document`);
  }
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success)
    throw altered(`its policy version ${signed.version} is not a policy document pg-agent understands`);
  if (parsed.data.version !== signed.version)
    throw altered(`the policy stored as version ${signed.version} says it is version ${parsed.data.version}`);
  if (parsed.data.database !== database) {
    throw altered(
      `its policy was signed for the database ${parsed.data.database}, not for this one (${database}): a copy or restore of another database`,
    );
  }
  return parsed.data;
}

/** The next version: the same document with one approver added or changed (enrolment is an admin's signed act). */
export function withApprover(current: PolicyDocument, approver: Approver, at: Date): PolicyDocument {
  return {
    ...current,
    version: current.version + 1,
    approvers: [...current.approvers.filter((a) => a.name !== approver.name), approver],
    signedAt: at.toISOString(),
  };
}

export function withPolicy(current: PolicyDocument, policy: ApprovalPolicy, at: Date): PolicyDocument {
  return {
    ...current,
    version: current.version + 1,
    policy: approvalPolicySchema.parse(policy),
    signedAt: at.toISOString(),
  };
}

/** A policy given on the command line as JSON (e.g. '{"twoPersonAbove":"MEDIUM"}'), checked. */
export function parsePolicyJson(text: string): ApprovalPolicy {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError(
      'BAD_INPUT',
      '--policy is not JSON.',
      'e.g. --policy \'{"twoPersonAbove":"MEDIUM","rolesFor":{"CRITICAL":["dba"]}}\'',
      { cause: error },
    );
  }
  const parsed = approvalPolicySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentError(
      'BAD_INPUT',
      `--policy: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'bad shape'}.`,
      'Keys: requireSignature, twoPersonAbove, noSelfApprovalAbove, rolesFor, recovery ({"enabled":false} or {"maxCopyBytes":N}).',
    );
  }
  return parsed.data;
}
