/**
 * The guard's own users (SPEC §5 8: clients hold guard credentials, never the database's). Each is kept
 * as a SCRAM-SHA-256 verifier (salt, iterations, StoredKey, ServerKey: pg-gateway's createScramSha256Data),
 * never as a password: the password is shown once, in the connection URL `guard users add` prints.
 * Stored in `.pgagent/guard/users.json` (mode 0600), written atomically. A user's role: `client` (the default)
 * sees only its own tickets through the guard's commands; `approver` (`guard users add NAME --role approver`)
 * sees every ticket of the guard's database, as a person who decides them must.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createScramSha256Data } from 'pg-gateway';
import type { ScramSha256Data } from 'pg-gateway';
import { z } from 'zod';
import { writeFileAtomic } from '../core/fs/atomicWrite';
import { isErrno } from '../core/fs/errno';
import { AgentError } from '../core/platform/errors';

const verifierSchema = z.strictObject({
  salt: z.string(),
  iterations: z.number().int().positive(),
  storedKey: z.string(),
  serverKey: z.string(),
  createdAt: z.string(),
  role: z.enum(['approver']).optional(),
});
const usersFileSchema = z.strictObject({ users: z.record(z.string(), verifierSchema) });
type UsersFile = z.infer<typeof usersFileSchema>;

export const GUARD_ROLES = ['client', 'approver'] as const;
export type GuardRole = (typeof GUARD_ROLES)[number];

/** `--role`: client (the default) or approver; anything else is refused. */
export function guardRoleOf(value: string | boolean | undefined): GuardRole {
  if (value === undefined) return 'client';
  if (value === 'client' || value === 'approver') return value;
  throw new AgentError(
    'BAD_INPUT',
    `--role "${String(value)}" is not client or approver.`,
    'approver: the user sees every held ticket of the guard; client (the default): only its own.',
  );
}

/** Names a person can type in a URL without escaping, and PostgreSQL accepts as a user name. */
const USER_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function guardDir(workspaceDir: string): string {
  return join(workspaceDir, '.pgagent', 'guard');
}

export class GuardUsers {
  private dummy: Promise<ScramSha256Data> | undefined;

  constructor(private readonly file: string) {}

  static inWorkspace(workspaceDir: string): GuardUsers {
    return new GuardUsers(join(guardDir(workspaceDir), 'users.json'));
  }

  /** Adds a user with a fresh random password and returns that password (shown once, never stored). */
  async add(name: string, role: GuardRole = 'client'): Promise<string> {
    if (!USER_NAME.test(name)) {
      throw new AgentError(
        'BAD_INPUT',
        `"${name}" is not a guard user name.`,
        'Use lowercase letters, digits and _, starting with a letter (at most 63).',
      );
    }
    const file = await this.read();
    if (file.users[name])
      throw new AgentError(
        'BAD_INPUT',
        `Guard user "${name}" exists already.`,
        'Pick another name (its password cannot be shown again).',
      );
    const password = randomBytes(24).toString('base64url');
    const verifier = await createScramSha256Data(password);
    file.users[name] = {
      ...verifier,
      createdAt: new Date().toISOString(),
      ...(role === 'approver' ? { role } : {}),
    };
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file, `${JSON.stringify(file, null, 2)}\n`);
    await chmod(this.file, 0o600);
    return password;
  }

  async names(): Promise<string[]> {
    return Object.keys((await this.read()).users).sort();
  }

  /** Each user and its role, by name. */
  async list(): Promise<{ user: string; role: GuardRole }[]> {
    const { users } = await this.read();
    return Object.keys(users)
      .sort()
      .map((user) => ({ user, role: users[user]!.role ?? 'client' }));
  }

  /** The role of a user as the file says now (read at each connection); an unknown name is a client. */
  async role(name: string): Promise<GuardRole> {
    return (await this.read()).users[name]?.role ?? 'client';
  }

  /**
   * The verifier SCRAM checks a client against. An unknown user gets a verifier of a random password, so
   * the exchange runs to its end and fails like a wrong password (nobody learns which names exist).
   */
  async verifier(name: string): Promise<ScramSha256Data> {
    const known = (await this.read()).users[name];
    if (known)
      return { salt: known.salt, iterations: known.iterations, storedKey: known.storedKey, serverKey: known.serverKey };
    this.dummy ??= createScramSha256Data(randomBytes(24).toString('base64url'));
    return this.dummy;
  }

  private async read(): Promise<UsersFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return { users: {} };
      throw error;
    }
    const parsed = usersFileSchema.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new AgentError(
        'BAD_INPUT',
        `${this.file} is not a guard users file: ${parsed.error.issues[0]?.message ?? 'invalid'}.`,
      );
    return parsed.data;
  }
}
