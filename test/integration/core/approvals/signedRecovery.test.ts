// Issue 25: the recovery window is "off with a signed policy setting". Without signed mode the person's own
// config decides (as before); with a policy pinned in the database, only the signed document does: its
// `recovery` turns the window off or sets its copy limit, and an own config that turns it off is ignored
// there (an agent with a shell as the same OS user could edit that file). Asserted on the impact's way back
// computed against a real database with a real pin, and on the quarantine after execution.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyText } from '../../../../src/core/approvals/decisionSignature';
import { initSchemaSql } from '../../../../src/core/approvals/pgagentSchema';
import type { PolicyDocument } from '../../../../src/core/approvals/policyDocument';
import { POLICY_DOCUMENT_FORMAT, signPolicy } from '../../../../src/core/approvals/policyDocument';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { databaseIdentity } from '../../../../src/core/db/databaseIdentity';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { classifySql } from '../../../../src/core/sql/classify';
import { analyzeImpact } from '../../../../src/core/sql/impact';
import { loadParser } from '../../../../src/core/sql/parse';
import type { SafetySettings } from '../../../../src/core/sql/safetySettings';
import { DEFAULT_RECOVERY, DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

describe.runIf(postgresAvailable)('the recovery window under a signed policy (issue 25)', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  const admin = generateKeyPairSync('ed25519');
  const adminKey = publicKeyText(admin.privateKey);
  let identity = '';

  const ways = async (sql: string, extra: Partial<SafetySettings> = {}) =>
    (await analyzeImpact(db, classifySql(sql), { ...DEFAULT_SAFETY, ...extra })).recovery ?? [];

  /** Pins (first time) or re-signs the policy of this database, as `policy init` / `policy set` would. */
  let version = 0;
  async function signed(policy: PolicyDocument['policy']): Promise<void> {
    version += 1;
    const document: PolicyDocument = {
      format: POLICY_DOCUMENT_FORMAT,
      database: identity,
      version,
      approvers: [],
      policy: { ...policy, requireSignature: true },
      signedAt: new Date().toISOString(),
    };
    const signedPolicy = signPolicy(admin.privateKey, document);
    if (version === 1) {
      await execSql(scratch.url, initSchemaSql(adminKey, signedPolicy));
    } else {
      // The admin's signed change, written as `policy set` writes it (guards of the schema allow a higher version).
      await db.query('INSERT INTO pgagent.policy (version, document, signature) VALUES ($1, $2, $3)', [
        signedPolicy.version,
        signedPolicy.document,
        signedPolicy.signature,
      ]);
      await db.query('UPDATE pgagent.policy_pin SET version = $1', [signedPolicy.version]);
    }
  }

  beforeAll(async () => {
    await loadParser();
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      "CREATE TABLE archive (id int PRIMARY KEY, body text); INSERT INTO archive SELECT g, repeat('x', 50) FROM generate_series(1, 200) g; ANALYZE;",
    );
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    identity = (await db.withSession((s) => databaseIdentity(s))).key;
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('without signed mode, the own config decides: on by default, off when it says so', async () => {
    expect((await ways('DROP TABLE archive'))[0]?.way).toBe('quarantine');
    const off = await ways('DROP TABLE archive', { recovery: { ...DEFAULT_RECOVERY, enabled: false } });
    expect(off[0]?.way).toBe('none');
    expect(off[0]?.summary).toContain('safety.recovery in your own config');
  });

  it('in signed mode an own config that turns it off is ignored; the signed document turns it off or limits the copy', async () => {
    await signed({});
    const ownOff = await ways('DROP TABLE archive', { recovery: { ...DEFAULT_RECOVERY, enabled: false } });
    expect(ownOff[0]?.way).toBe('quarantine');

    await signed({ recovery: { maxCopyBytes: 1 } });
    const limited = await ways('TRUNCATE archive');
    expect(limited[0]?.way).toBe('none');
    expect(limited[0]?.summary).toContain('above the');
    expect((await ways('DROP TABLE archive'))[0]?.way).toBe('quarantine');

    await signed({ recovery: { enabled: false } });
    const off = await ways('DROP TABLE archive', { recovery: { ...DEFAULT_RECOVERY, enabled: true } });
    expect(off[0]?.way).toBe('none');
    expect(off[0]?.summary).toContain(`the signed policy version ${version} of this database`);
  });

  it('a forged document (not signed by the pinned admin key) does not turn it off: the window stays on', async () => {
    await signed({});
    version += 1;
    const mallory = generateKeyPairSync('ed25519');
    const forged = signPolicy(mallory.privateKey, {
      format: POLICY_DOCUMENT_FORMAT,
      database: identity,
      version,
      approvers: [],
      policy: { requireSignature: true, recovery: { enabled: false } },
      signedAt: new Date().toISOString(),
    });
    await db.query('INSERT INTO pgagent.policy (version, document, signature) VALUES ($1, $2, $3)', [
      forged.version,
      forged.document,
      forged.signature,
    ]);
    await db.query('UPDATE pgagent.policy_pin SET version = $1', [forged.version]);
    const way = (await ways('DROP TABLE archive', { recovery: { ...DEFAULT_RECOVERY, enabled: false } }))[0];
    expect(way?.way).toBe('quarantine');
  });
});
