/**
 * Passwords in free text that is kept: a person's question or task, a model's reply and the SQL in its tool calls,
 * an audit line. A password may be quoted as SQL quotes a constant ('…', E'…', $$…$$, $tag$…$tag$) or as a
 * person quotes a word ("…"), after the word "password" ("PASSWORD '…'", "password is '…'", "password for bob
 * to '…'"), or sit in a connection string (`password=…`, `postgres://user:…@host`).
 * - `passwordsAsVerifiers`: a quoted password becomes its SCRAM-SHA-256 verifier, which keeps its meaning (a role
 *   given it logs in with the typed password; PostgreSQL stores a pre-hashed password as it is), and a connection
 *   string's password `<hidden>` (the classifier refuses such a statement anyway: clearSecrets.ts).
 * - `redactPasswords`: every password `<hidden>` (what a run's audit trail keeps).
 * Verifiers (SCRAM or md5) are left as they are.
 */
import { isPrehashed, scramVerifier } from './scramVerifier';

/** Seen before anything else is tried: a text without any of these holds no password. */
const MAY_HOLD = /password|:\/\/[^\s'@]*@/i;

/** What leads to a quoted password: the word, an optional "for/of <name>", then "is/to/as", "=" or ":". */
const LEAD = String.raw`(\bpassword\s*(?:(?:for|of)\s+(?:'[^']*'|"[^"]*"|[^\s'"]+)\s+)?(?:(?:is|to|as)\s+|[=:]\s*)?)`;
/** A quoted constant; `E'…'` with its backslash escapes. */
const QUOTED = new RegExp(
  LEAD + String.raw`(E'(?:[^'\\]|\\[\s\S]|'')*'|'(?:[^']|'')*'|"[^"]*"|\$(?<tag>[A-Za-z_]\w*)?\$[\s\S]*?\$\k<tag>\$)`,
  'gi',
);
const KEYWORD_PASSWORD = /((?:^|[\s'"])(?:ssl)?password\s*=\s*)[^\s'"\\]+/gi;
const URI_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:'"]*:)[^\s/@'"]+@/gi;

/** The text with each quoted password as its SCRAM-SHA-256 verifier and each connection string's hidden. */
export function passwordsAsVerifiers(text: string): string {
  if (!MAY_HOLD.test(text)) return text;
  return hideConnectionStrings(
    text.replace(QUOTED, (whole, lead: string, constant: string) => {
      const password = unquote(constant);
      return isPrehashed(password) ? whole : `${lead}'${scramVerifier(password)}'`;
    }),
  );
}

/** Free text that may quote SQL (a model's answer, the messages it was sent) with every password `<hidden>`. */
export function redactPasswords(text: string): string {
  if (!MAY_HOLD.test(text)) return text;
  return hideConnectionStrings(
    text.replace(QUOTED, (whole, lead: string, constant: string) =>
      isPrehashed(unquote(constant)) ? whole : `${lead}'<hidden>'`,
    ),
  );
}

/**
 * A record to keep (an audit event) with every password in its strings `<hidden>`: each string is read as it is,
 * not as the JSON it becomes, so a quote or backslash is never read through an escape.
 */
export function withRedactedPasswords<T>(value: T): T {
  if (typeof value === 'string') return redactPasswords(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => withRedactedPasswords(v)) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRedactedPasswords(v)])) as T;
}

function hideConnectionStrings(text: string): string {
  return text.replace(KEYWORD_PASSWORD, '$1<hidden>').replace(URI_PASSWORD, '$1<hidden>@');
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** The value a quoted constant spells. */
function unquote(constant: string): string {
  if (constant.startsWith('$'))
    return constant.slice(constant.indexOf('$', 1) + 1, constant.lastIndexOf('$', constant.length - 2));
  if (constant.startsWith('"')) return constant.slice(1, -1);
  if (/^E/i.test(constant))
    return constant
      .slice(2, -1)
      .replace(/''|\\(x[0-9a-f]{1,2}|[0-7]{1,3}|u[0-9a-f]{4}|U[0-9a-f]{8}|[\s\S])/gi, (all, escape?: string) => {
        if (escape === undefined) return "'";
        if (/^x./i.test(escape)) return String.fromCharCode(parseInt(escape.slice(1), 16));
        if (/^[0-7]/.test(escape)) return String.fromCharCode(parseInt(escape, 8));
        if (/^u/i.test(escape) && escape.length > 1) return String.fromCodePoint(parseInt(escape.slice(1), 16));
        return ESCAPES[escape] ?? escape;
      });
  return constant.slice(1, -1).replace(/''/g, "'");
}
