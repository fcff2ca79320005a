/**
 * Which values of a measured transaction may differ in its approved retry ("varies on retry" on the card), decided
 * when the transaction is held, so the person sees them before approving and the ticket's hash covers them:
 * - `returned`: a value the server produced earlier in the same transaction (statement j's RETURNING, a recorded
 *   `SELECT nextval(…)`), passed on by the client. In the retry it must equal what statement j returned there,
 *   whatever that is. It may stand anywhere, a predicate included: it names a row this transaction made.
 * - `uuid`: a random UUID of version 4 the client made; `timestamp`: the client's current time (an ISO-8601 date
 *   and time within TIMESTAMP_WINDOW_MS of the measuring guard's clock). Never in a predicate that chooses rows,
 *   an INSERT with ON CONFLICT, or a key column of an UPDATE … SET, and a UUID only while it is fresh: seen in no
 *   predicate of the measured run. The same UUID again later is `same`: in the retry, the first place's value.
 * Everything else must be identical. The person's own config may turn `uuid`/`timestamp` off (identical only).
 */
import type { GuardVaryingValue } from '../../core/approvals/ticket';
import type { ReturnedRows } from './resultCapture';
import type { StatementValues, ValueSite } from './statementValues';

/** How far a volatile timestamp may be from the clock of the guard that reads it (measured run or retry). */
export const TIMESTAMP_WINDOW_MS = 10 * 60 * 1000;

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

export const isUuidV4 = (value: string): boolean => UUID_V4.test(value);

/** The instants a timestamp's text may name (one with a zone; without one, read as UTC and as the guard's local time). */
export function timestampInstants(value: string): number[] | undefined {
  const match = TIMESTAMP.exec(value);
  if (!match) return undefined;
  const iso = value
    .replace(' ', 'T')
    .replace(/([+-]\d{2})$/, '$1:00')
    .replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  if (match[1] !== undefined) {
    const at = Date.parse(iso);
    return Number.isNaN(at) ? undefined : [at];
  }
  const utc = Date.parse(`${iso}Z`);
  const local = Date.parse(iso);
  return Number.isNaN(utc) || Number.isNaN(local) ? undefined : [utc, local];
}

/** A timestamp's text within the window of `now`; `like`: the measured value, whose zone (given or not) it must keep. */
export function isCurrentTimestamp(value: string, now: number, like?: string): boolean {
  const instants = timestampInstants(value);
  if (!instants) return false;
  const zoned = (text: string): boolean => TIMESTAMP.exec(text)?.[1] !== undefined;
  if (like !== undefined && zoned(like) !== zoned(value)) return false;
  return instants.some((at) => Math.abs(at - now) <= TIMESTAMP_WINDOW_MS);
}

export interface VaryingRule {
  /** Fresh UUIDs and current timestamps may vary (the settings in force: guardVolatileValues). */
  volatile: boolean;
  /** The guard's clock (ms) when the transaction is judged. */
  now: number;
}

/** Every value at a predicate of these statements (a value seen there is never fresh). */
export function predicateValues(statements: readonly StatementValues[]): Set<string> {
  return new Set(
    statements.flatMap((s) => s.sites.filter((v) => v.choosesRows && v.value !== null).map((v) => v.value!)),
  );
}

/**
 * The varying values of each statement of a measured run (index by index). `keyColumns` names the key columns
 * (primary key, unique) of a table an UPDATE sets a volatile-looking value on.
 */
export async function markVarying(
  statements: readonly StatementValues[],
  returned: ReadonlyMap<number, ReturnedRows>,
  rule: VaryingRule,
  keyColumns: (table: string) => Promise<ReadonlySet<string>>,
): Promise<GuardVaryingValue[][]> {
  const predicates = predicateValues(statements);
  const firstUuid = new Map<string, { from: number; fromAt: number }>();
  const marks: GuardVaryingValue[][] = [];
  for (const [k, statement] of statements.entries()) {
    const varies: GuardVaryingValue[] = [];
    for (const [at, site] of statement.sites.entries()) {
      if (site.value === null || !site.dml) continue;
      const source = returnedSource(site.value, k, returned);
      if (source) {
        varies.push({ at, kind: 'returned', value: site.value, ...source });
        continue;
      }
      if (!rule.volatile || site.choosesRows || (await isKeyColumn(site, keyColumns))) continue;
      if (isUuidV4(site.value) && !predicates.has(site.value)) {
        const first = firstUuid.get(site.value);
        if (first) varies.push({ at, kind: 'same', value: site.value, ...first });
        else {
          firstUuid.set(site.value, { from: k, fromAt: at });
          varies.push({ at, kind: 'uuid', value: site.value });
        }
      } else if (isCurrentTimestamp(site.value, rule.now)) varies.push({ at, kind: 'timestamp', value: site.value });
    }
    marks.push(varies);
  }
  return marks;
}

async function isKeyColumn(
  site: ValueSite,
  keyColumns: (table: string) => Promise<ReadonlySet<string>>,
): Promise<boolean> {
  if (!site.setColumn) return false;
  return (await keyColumns(site.setColumn.table)).has(site.setColumn.column);
}

/** The nearest earlier statement that returned this value: its index, row and column. */
function returnedSource(
  value: string,
  before: number,
  returned: ReadonlyMap<number, ReturnedRows>,
): Pick<GuardVaryingValue, 'from' | 'row' | 'column'> | undefined {
  for (let j = before - 1; j >= 0; j--) {
    const rows = returned.get(j);
    if (!rows) continue;
    for (const [row, cells] of rows.rows.entries()) {
      const c = cells.indexOf(value);
      if (c >= 0) return { from: j, row, column: rows.columns[c] ?? `column ${c + 1}` };
    }
  }
  return undefined;
}

/** One "varies on retry" line of the card, for statement `index` (0-based). */
export function varyingLine(index: number, v: GuardVaryingValue): string {
  const where = `statement ${index + 1}, value ${v.at + 1} (${v.value})`;
  switch (v.kind) {
    case 'returned':
      return `${where}: the value statement ${(v.from ?? 0) + 1} returned (${v.column}, row ${(v.row ?? 0) + 1}) in the retry`;
    case 'uuid':
      return `${where}: a fresh random UUID (version 4)`;
    case 'timestamp':
      return `${where}: the current time, within ${TIMESTAMP_WINDOW_MS / 60_000} minutes of the retry's clock`;
    case 'same':
      return `${where}: the same value as statement ${(v.from ?? 0) + 1}, value ${(v.fromAt ?? 0) + 1}`;
  }
}
