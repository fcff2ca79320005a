// Issue 25: a signed policy document may carry the recovery window of its database. `policy set --policy`
// takes it as JSON; a malformed setting is a clear BAD_INPUT, and a signed document with it verifies.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { publicKeyText } from '../../../../src/core/approvals/decisionSignature';
import type { PolicyDocument } from '../../../../src/core/approvals/policyDocument';
import {
  parsePolicyJson,
  POLICY_DOCUMENT_FORMAT,
  signPolicy,
  verifyPolicy,
  withPolicy,
} from '../../../../src/core/approvals/policyDocument';

describe('the recovery setting of a signed policy', () => {
  it('parses from --policy JSON, partial', () => {
    expect(parsePolicyJson('{"recovery":{"enabled":false}}')).toEqual({ recovery: { enabled: false } });
    expect(parsePolicyJson('{"twoPersonAbove":"HIGH","recovery":{"maxCopyBytes":1048576}}')).toEqual({
      twoPersonAbove: 'HIGH',
      recovery: { maxCopyBytes: 1048576 },
    });
  });

  it('refuses a malformed setting, naming the key', () => {
    expect(() => parsePolicyJson('{"recovery":{"enabled":"no"}}')).toThrow(/recovery\.enabled/);
    expect(() => parsePolicyJson('{"recovery":{"maxCopyBytes":-1}}')).toThrow(/recovery\.maxCopyBytes/);
    expect(() => parsePolicyJson('{"recovery":{"off":true}}')).toThrow(/recovery/);
  });

  it('is part of what the admin signs: it verifies, and survives the next version', () => {
    const admin = generateKeyPairSync('ed25519');
    const first: PolicyDocument = {
      format: POLICY_DOCUMENT_FORMAT,
      database: '7/shop',
      version: 1,
      approvers: [],
      policy: { requireSignature: true },
      signedAt: new Date(0).toISOString(),
    };
    const next = withPolicy(first, { requireSignature: true, recovery: { enabled: false } }, new Date(1000));
    const signed = signPolicy(admin.privateKey, next);
    expect(verifyPolicy(signed, publicKeyText(admin.privateKey), '7/shop').policy.recovery).toEqual({ enabled: false });
    // Turned on again by hand in the stored text: no longer what the admin signed.
    const altered = { ...signed, document: signed.document.replace('"enabled":false', '"enabled":true') };
    expect(() => verifyPolicy(altered, publicKeyText(admin.privateKey), '7/shop')).toThrow(
      /not signed by the pinned admin key/,
    );
  });
});
