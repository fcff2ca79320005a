/**
 * A password written in SQL (`CREATE/ALTER ROLE|USER|GROUP … [ENCRYPTED] PASSWORD '…'`) replaced by its
 * SCRAM-SHA-256 verifier before anything keeps the statement: the ticket, its impact, history, logs and undo all
 * hold the verifier, and the verifier is what runs (PostgreSQL stores a pre-hashed password as it is).
 * Called where a statement is first checked (checkSqlParsed), so every surface gets the same text.
 */
import { createHash } from 'node:crypto';
import type { ParsedInput } from '../parse';
import { loadParser, parseSql, stringConstantsOf } from '../parse';
import { isPrehashed, scramVerifier, verifierParts } from './scramVerifier';
import { passwordsAsVerifiers } from './textPasswords';
import type { VerifierParts } from './scramVerifier';

export interface HiddenPasswords {
  /** The input with each clear-text password replaced by its verifier. */
  sql: string;
  parsed: ParsedInput;
  /** The roles whose password the SQL sets (ALTER ROLE CURRENT_USER: "CURRENT_USER"), in order. */
  roles: string[];
}

type Rec = Record<string, unknown>;

/** The statements whose password option becomes a SCRAM verifier. */
export const ROLE_KINDS: ReadonlySet<string> = new Set(['CreateRoleStmt', 'AlterRoleStmt']);

/**
 * The input with its passwords hidden, or undefined when it sets none in clear (the common case costs one walk
 * of the top-level statements). `reuseFrom`: texts held before (tickets) whose verifiers' salts are tried, so
 * that the same statement sent again becomes the same text (a guard client's retry finds its ticket).
 */
export function hidePasswords(parsed: ParsedInput, reuseFrom: readonly string[] = []): HiddenPasswords | undefined {
  const spots = passwordSpots(parsed);
  if (spots.length === 0) return undefined;
  const bytes = Buffer.from(parsed.input, 'utf8');
  const rewrite = (salts: readonly (VerifierParts | undefined)[]): string => {
    const pieces: Buffer[] = [];
    let at = 0;
    spots.forEach((spot, i) => {
      pieces.push(bytes.subarray(at, spot.start), Buffer.from(`'${scramVerifier(spot.password, salts[i])}'`, 'utf8'));
      at = spot.end;
    });
    pieces.push(bytes.subarray(at));
    return Buffer.concat(pieces).toString('utf8');
  };
  let sql: string | undefined;
  for (const earlier of reuseFrom) {
    const salts = [...earlier.matchAll(/'(SCRAM-SHA-256\$[^']+)'/g)].map((m) => verifierParts(m[1] ?? ''));
    if (salts.length !== spots.length || salts.some((s) => s === undefined)) continue;
    const again = rewrite(salts);
    if (again === earlier) {
      sql = again;
      break;
    }
  }
  sql ??= rewrite([]);
  return { sql, parsed: parseSql(sql), roles: spots.map((s) => s.role) };
}

/**
 * SQL as it may be kept before it is checked (a model's answer, kept in a run's state): its role passwords as
 * their verifiers; as it is when it sets none, or does not parse (the check then refuses it as it is).
 */
export async function withPasswordsHidden(sql: string): Promise<string> {
  if (!/password/i.test(sql)) return sql;
  await loadParser();
  try {
    return hidePasswords(parseSql(sql))?.sql ?? sql;
  } catch {
    return sql;
  }
}

/** Tool arguments that hold SQL (a statement, or `count_rows`' WHERE condition): never rewritten as free text. */
const SQL_ARGS: ReadonlySet<string> = new Set(['sql', 'where']);

/**
 * A model's tool-call arguments as a run may keep them (a job's checkpoint, its audit): SQL (an argument named
 * `sql` or `where`, at any depth) with its role passwords as their verifiers, which is also what runs (a WHERE
 * condition sets no role password, so it stays as written: `password = 'x'` on an app's table keeps its meaning);
 * other text as `passwordsAsVerifiers` keeps it.
 */
export async function toolArgsWithPasswordsHidden<T>(value: T, key = ''): Promise<T> {
  if (typeof value === 'string')
    return (SQL_ARGS.has(key) ? await withPasswordsHidden(value) : passwordsAsVerifiers(value)) as T;
  if (Array.isArray(value)) return (await Promise.all(value.map((v: unknown) => toolArgsWithPasswordsHidden(v)))) as T;
  if (typeof value !== 'object' || value === null) return value;
  const entries = await Promise.all(
    Object.entries(value).map(async ([k, v]) => [k, await toolArgsWithPasswordsHidden(v, k)] as const),
  );
  return Object.fromEntries(entries) as T;
}

/**
 * The statement with each clear-text password left out (`''`), hashed: what finds the earlier tickets of the same
 * statement without keeping anything of the password; undefined when it sets none in clear.
 */
export function passwordShapeKey(parsed: ParsedInput): string | undefined {
  const spots = passwordSpots(parsed);
  if (spots.length === 0) return undefined;
  const bytes = Buffer.from(parsed.input, 'utf8');
  const hash = createHash('sha256').update('password-shape\n');
  let at = 0;
  for (const spot of spots) {
    hash.update(bytes.subarray(at, spot.start)).update("''");
    at = spot.end;
  }
  return `pw:${hash.update(bytes.subarray(at)).digest('hex')}`;
}

function passwordSpots(parsed: ParsedInput): (PasswordOption & { start: number; end: number })[] {
  const found = passwordsOf(parsed);
  if (found.length === 0) return [];
  const constants = stringConstantsOf(parsed.input);
  return found.map((f) => {
    const constant = constants.find((c) => c.start > f.location);
    if (!constant) throw new Error('A password option without its string constant.');
    return { ...f, ...constant };
  });
}

/** True when one of the statements sets a role's password in clear (what hidePasswords rewrites). */
export function setsPassword(statements: readonly { kind: string; sql: string }[]): boolean {
  return statements.some((s) => ROLE_KINDS.has(s.kind) && passwordsOf(parseSql(s.sql)).length > 0);
}

/** The one warning every surface shows for a statement that sets a password (never its text). */
export function passwordNotice(roles: readonly string[]): string {
  return `Sets the password of ${roles.map((r) => `role ${r}`).join(', ')}: kept, shown and run as its SCRAM-SHA-256 verifier; the typed password is stored nowhere.`;
}

interface PasswordOption {
  role: string;
  password: string;
  /** UTF-8 byte offset of the option (the PASSWORD keyword, or ENCRYPTED before it). */
  location: number;
}

function passwordsOf(parsed: ParsedInput): PasswordOption[] {
  const found: PasswordOption[] = [];
  for (const statement of parsed.statements) {
    const tree = statement.tree as Rec;
    const node = (tree['CreateRoleStmt'] ?? tree['AlterRoleStmt']) as Rec | undefined;
    if (!node) continue;
    const role = roleName(node['role']);
    for (const option of (node['options'] as Rec[] | undefined) ?? []) {
      const def = option['DefElem'] as Rec | undefined;
      if (def?.['defname'] !== 'password') continue;
      const value = ((def['arg'] as Rec | undefined)?.['String'] as Rec | undefined)?.['sval'];
      if (typeof value !== 'string' || isPrehashed(value)) continue;
      found.push({ role, password: value, location: Number(def['location'] ?? 0) });
    }
  }
  return found.sort((a, b) => a.location - b.location);
}

function roleName(role: unknown): string {
  if (typeof role === 'string') return role;
  const spec = role as Rec | undefined;
  if (typeof spec?.['rolename'] === 'string') return spec['rolename'];
  const type = spec?.['roletype'];
  return typeof type === 'string' ? type.replace(/^ROLESPEC_/, '') : 'unknown';
}
