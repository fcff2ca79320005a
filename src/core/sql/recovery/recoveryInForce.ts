/**
 * Which recovery window governs a database (issue 25). Without signed mode: the settings given (the person's
 * own config may turn it off; a workspace never can). In signed mode (a policy pinned in the database): only
 * the signed document decides — its `recovery` over the defaults — so an agent with a shell as the same OS
 * user cannot turn the way back off by editing a config file. A pin that does not verify keeps the window on
 * (stricter is safe; the executor refuses that database anyway).
 */
import type { DbSession } from '../../db/db';
import { databaseIdentity } from '../../db/databaseIdentity';
import { readPinnedPolicy } from '../../approvals/pinnedPolicy';
import type { RecoverySettings } from '../safetySettings';
import { DEFAULT_RECOVERY } from '../safetySettings';

export interface RecoveryInForce {
  settings: RecoverySettings;
  /** Where the settings came from, as shown when the window is off. */
  source: string;
}

export async function recoveryInForce(session: DbSession, own: RecoverySettings): Promise<RecoveryInForce> {
  let pinned;
  try {
    pinned = await readPinnedPolicy(session, await databaseIdentity(session));
  } catch {
    return { settings: DEFAULT_RECOVERY, source: 'the default (the pinned policy of this database does not verify)' };
  }
  if (!pinned) return { settings: own, source: 'safety.recovery in your own config' };
  const signed = pinned.document.policy.recovery ?? {};
  return {
    settings: { ...DEFAULT_RECOVERY, ...signed },
    source: `the signed policy version ${pinned.version} of this database`,
  };
}
