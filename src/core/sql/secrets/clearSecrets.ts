/**
 * Passwords in SQL that PostgreSQL cannot take as a verifier: a `password` option of a user mapping or a foreign
 * server (`CREATE/ALTER USER MAPPING … OPTIONS (password '…')`), and a connection string with a password in any
 * string constant (`dblink('… password=…', …)`, `postgres://user:secret@host`). The statement would reach the
 * ticket, history and logs with the password in clear, so the classifier refuses it (a role's password is kept
 * as its SCRAM verifier instead: hidePasswords.ts).
 */
import type { ParsedStatement } from '../parse';
import { isRec } from '../parseTree';
import { ROLE_KINDS } from './hidePasswords';

/** Seen before the tree is walked: a statement without any of these holds no password. */
const MAY_HOLD = /password|:\/\/[^\s'@]*@/i;
/** A libpq keyword/value string or a URI with a password. */
const CONNECTION_PASSWORD = /(?:^|\s)(?:ssl)?password\s*=|\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:']*:[^\s/@']+@/i;
const INSTEAD =
  'run it yourself outside pg-agent (psql), or leave the password out of the SQL (a password file, .pgpass, of the database server for dblink and postgres_fdw)';

/** Why `statement` cannot be kept safely (never its text), or undefined when it holds no password in clear. */
export function clearSecretOf(statement: ParsedStatement): string | undefined {
  if (!MAY_HOLD.test(statement.sql)) return undefined;
  const options = !ROLE_KINDS.has(statement.kind);
  const stack: unknown[] = [statement.tree];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (Array.isArray(node)) stack.push(...(node as unknown[]));
    if (!isRec(node)) continue;
    if (options && isRec(node.DefElem) && /password$/i.test(String(node.DefElem.defname)))
      return `sets a password option (${String(node.DefElem.defname)}) in clear, which PostgreSQL keeps only as it is typed: pg-agent would keep it in its ticket, history and logs; ${INSTEAD}`;
    if (typeof node.sval === 'string' && CONNECTION_PASSWORD.test(node.sval))
      return `holds a connection string with a password in clear: pg-agent would keep it in its ticket, history and logs; ${INSTEAD}`;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return undefined;
}
