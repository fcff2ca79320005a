/**
 * Where a ticket's database is, from its connection key, resolved the way the ticket was made: the environment's
 * database (DATABASE_URL, PG*) or a workspace profile with that key (their TLS, tunnel and password settings),
 * the workspace's sample database, else the key itself as a URL (password from PGPASSWORD or ~/.pgpass).
 */
import type { ConnectionProfile, ConnectionTarget, Env } from '../core/db/connectionTarget';
import { connectionKey, parseConnectionUrl, profileTarget, resolveTarget } from '../core/db/connectionTarget';
import { AgentError } from '../core/platform/errors';

export function targetOfTicket(
  connection: string,
  options: { profiles: readonly ConnectionProfile[]; env: Env; sampleDbDir: string },
): ConnectionTarget {
  const { env, sampleDbDir } = options;
  const fromEnv = envTarget(env);
  if (fromEnv && connectionKey(fromEnv, sampleDbDir) === connection) return fromEnv;
  const profile = options.profiles.find((p) => connectionKey(profileTarget(p), sampleDbDir) === connection);
  if (profile) return profileTarget(profile, env.PGPASSWORD);
  if (connection === connectionKey({ kind: 'sample' }, sampleDbDir)) return { kind: 'sample' };
  if (connection.startsWith('postgres://') && !connection.includes('?')) return parseConnectionUrl(connection, env);
  throw new AgentError(
    'BAD_INPUT',
    `The ticket's database (${connection}) cannot be reached from here without its settings.`,
    connection.startsWith('sample:')
      ? 'It is the sample database of another workspace: pass --workspace with that folder.'
      : 'Pass --connection with the profile it was made with, or --db with its URL.',
  );
}

function envTarget(env: Env): ConnectionTarget | undefined {
  try {
    const target = resolveTarget({ env });
    return target.kind === 'sample' ? undefined : target;
  } catch {
    return undefined;
  }
}
