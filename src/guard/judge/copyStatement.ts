/**
 * COPY through the guard (issue 24 item 1). `COPY … TO STDOUT` reads what it names and nothing more: it is
 * judged as the query that reads the same rows (`COPY t (a, b) TO STDOUT` as `SELECT a, b FROM ONLY t`,
 * `COPY (query) TO STDOUT` as the query itself), so a COPY whose query calls a writing function is held or
 * refused exactly like that query. COPY to or from a server file or a PROGRAM is never judged here (the core
 * classification holds or refuses it). `COPY … FROM STDIN` is a write with data the statement text does not
 * show: it runs only inside a measured transaction (copyIn.ts).
 */
import { parseSql } from '../../core/sql/parse';
import type { ParsedStatement } from '../../core/sql/parse';
import { isRec, rec, str } from '../../core/sql/parseTree';
import type { Rec } from '../../core/sql/parseTree';

/** An identifier always quoted (a name of the tree is already case-folded): exact whatever the word. */
export const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Parses tried to find the text of `COPY (query)`'s query before giving up (then the COPY is judged as a COPY). */
const MAX_TRIES = 200;

/** The read that returns the same rows as this `COPY … TO STDOUT`; undefined for any other statement. */
export function readOfCopyToStdout(statement: ParsedStatement): string | undefined {
  if (statement.kind !== 'CopyStmt') return undefined;
  const node = rec(statement.tree, 'CopyStmt');
  if (!node || node.is_from === true || node.is_program === true || str(node, 'filename') !== undefined)
    return undefined;
  if (node.whereClause !== undefined) return undefined;
  const relation = rec(node, 'relation');
  if (relation) {
    const relname = str(relation, 'relname');
    if (relname === undefined || str(relation, 'catalogname') !== undefined) return undefined;
    const schema = str(relation, 'schemaname');
    const table = `${schema !== undefined ? `${quoted(schema)}.` : ''}${quoted(relname)}`;
    const attlist = Array.isArray(node.attlist) ? node.attlist : [];
    const columns = attlist.map((a) => str(rec(a, 'String'), 'sval'));
    if (columns.some((c) => c === undefined)) return undefined;
    // COPY t TO reads t alone, never its inheritance children or partitions.
    return `SELECT ${columns.length > 0 ? columns.map((c) => quoted(c!)).join(', ') : '*'} FROM ONLY ${table}`;
  }
  return isRec(node.query) ? innerQueryText(statement.sql, node.query) : undefined;
}

/**
 * The text of `COPY (query)`'s query, found between two parentheses of the statement and kept only when it
 * parses to exactly the tree PostgreSQL's grammar gave the COPY (locations aside): what is judged is the
 * query the server runs, whatever comments or literals hold parentheses.
 */
function innerQueryText(sql: string, query: Rec): string | undefined {
  const want = JSON.stringify(withoutLocations(query));
  const opens = [...sql.matchAll(/\(/g)].map((m) => m.index);
  const closes = [...sql.matchAll(/\)/g)].map((m) => m.index).reverse();
  let tries = 0;
  for (const open of opens) {
    for (const close of closes) {
      if (close <= open) break;
      if (++tries > MAX_TRIES) return undefined;
      const candidate = sql.slice(open + 1, close);
      try {
        const parsed = parseSql(candidate).statements;
        if (parsed.length === 1 && JSON.stringify(withoutLocations(parsed[0]!.tree)) === want) return parsed[0]!.sql;
      } catch {
        // Not a statement: try the next pair.
      }
    }
  }
  return undefined;
}

function withoutLocations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutLocations);
  if (!isRec(value)) return value;
  const out: Rec = {};
  for (const [key, inner] of Object.entries(value))
    if (key !== 'location' && key !== 'stmt_location' && key !== 'stmt_len') out[key] = withoutLocations(inner);
  return out;
}
