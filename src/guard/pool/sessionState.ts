/**
 * What of a client's session lives on the upstream session it was given, in a transaction pool:
 * - its settings: the ones the guard lets a client change (judge.ts `HARMLESS_SETTINGS`: application_name,
 *   statement_timeout, TimeZone…), read back from the server after a transaction that may have changed them,
 *   and set on whichever pooled session the client gets next, before its first statement there;
 * - state that cannot move between sessions (LISTEN, a cursor WITH HOLD, a session advisory lock, a temporary
 *   table): read from the server after a transaction that may have made some; such a client keeps its session
 *   (it is pinned) until that state is gone or it disconnects.
 * Both are read only after a transaction with a statement that may have changed them (judge/sessionTouch.ts, from
 * the judge's parse), so a plain read costs no extra round trip.
 */
import { HARMLESS_SETTINGS } from '../judge/judge';

/** The settings a client may change, as the server names them (`SET TIME ZONE` is TimeZone). */
export const POOLED_SETTINGS: readonly string[] = [...HARMLESS_SETTINGS].filter((name) => name !== 'time zone');

/** One query that reads every pooled setting (in POOLED_SETTINGS order) and what would pin the session. */
export const SESSION_STATE_SQL = `SELECT ${POOLED_SETTINGS.map((n) => `current_setting('${n}')`).join(', ')}, (SELECT count(*) FROM pg_listening_channels()), (SELECT count(*) FROM pg_cursors WHERE is_holdable), (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())`;

const PIN_REASONS = ['LISTEN', 'a cursor WITH HOLD', 'a session advisory lock', 'a temporary table'];

/** The settings and the reasons to keep the session, from SESSION_STATE_SQL's row. */
export function readSessionState(row: readonly (string | null)[]): { settings: Map<string, string>; pins: string[] } {
  const settings = new Map<string, string>();
  POOLED_SETTINGS.forEach((name, i) => settings.set(name, row[i] ?? ''));
  const pins = PIN_REASONS.filter((_, i) => Number(row[POOLED_SETTINGS.length + i] ?? 0) > 0);
  return { settings, pins };
}

/** `SELECT set_config(…)` for each setting whose value differs on the server, or undefined when none does. */
export function applySettingsSql(
  wanted: ReadonlyMap<string, string>,
  current: ReadonlyMap<string, string>,
): string | undefined {
  const changes = [...wanted].filter(([name, value]) => current.get(name) !== value);
  if (changes.length === 0) return undefined;
  return `SELECT ${changes.map(([name, value]) => `set_config('${name}', ${literal(value)}, false)`).join(', ')}`;
}

/** A string literal (the pooled sessions have standard_conforming_strings=on). */
function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The client's start-up parameters that are pooled settings, by the server's name for them. */
export function startupSettings(forwarded: Readonly<Record<string, string>>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(forwarded)) {
    const lower = name.toLowerCase();
    if (POOLED_SETTINGS.includes(lower)) out.set(lower, value);
  }
  return out;
}
