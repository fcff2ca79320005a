/**
 * How a DDL lock reads for a person, the same in the terminal, the approval card and the Impact tab:
 * "blocks reads and writes of public.orders — 2.1M rows, 180 MB — for the whole run; rewrites the table".
 */

export interface LockPhraseInput {
  table: string;
  /** PostgreSQL's lock mode name in capitals (ACCESS EXCLUSIVE, SHARE, ...). */
  mode: string;
  blocks: 'reads and writes' | 'writes' | 'nothing';
  /** How long it is held: a catalog change (instant), a scan of the table, or a rewrite of it. */
  work: 'instant' | 'scan' | 'rewrite';
  /** The planner's row estimate (null: never analysed) and bytes on disk of the table. */
  rows: number | null;
  bytes: number | null;
  /**
   * For a table a statement drops or empties: true when `rows` was counted (count(*) within a short budget), false
   * when it stayed the planner's estimate (said as one). Absent for other tables: the estimate, as before.
   */
  rowsExact?: boolean;
}

export function describeLock(lock: LockPhraseInput): string {
  const size = lock.bytes === null ? '' : ` — ${describeSize(lock.rows, lock.bytes, lock.rowsExact)} —`;
  if (lock.blocks === 'nothing') {
    return `takes ${lock.mode} on ${lock.table}${size.replace(/ —$/, '')} (blocks no reads or writes)${lock.work === 'scan' ? ', reads every row' : ''}`;
  }
  const during =
    lock.work === 'rewrite'
      ? 'for the whole run; rewrites the table'
      : lock.work === 'scan'
        ? 'for the whole run (reads every row)'
        : 'briefly (catalog change only)';
  return `blocks ${lock.blocks} of ${lock.table}${size} ${during} (${lock.mode})`;
}

/** "2.1M rows, 180 MB" */
export function describeSize(rows: number | null, bytes: number, exact?: boolean): string {
  const count =
    rows === null
      ? 'rows unknown (never analysed)'
      : exact === true
        ? `${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'} (counted)`
        : exact === false
          ? `≈ ${compact(rows)} rows (estimate)`
          : `${compact(rows)} row${rows === 1 ? '' : 's'}`;
  return `${count}, ${formatBytes(bytes)}`;
}

function compact(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return n.toLocaleString('en-US');
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GB`;
  if (n >= 1024 ** 2) return `${Math.round(n / 1024 ** 2)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} kB`;
  return `${n} bytes`;
}

/** What lockPhrases needs of a session in the way of a lock (LockHolderView in impactReport.ts). */
export interface LockHolderPhraseInput {
  pid: number | null;
  table: string;
  mode: string;
  granted: boolean;
  user: string | null;
  state: string | null;
  stateSeconds: number | null;
  transactionSeconds: number | null;
  query: string | null;
}

/** "pid 4242 (user app, idle in transaction for 12 min, holds ACCESS SHARE on public.orders; query: SELECT …)" */
export function describeLockHolder(holder: LockHolderPhraseInput): string {
  const who = holder.pid === null ? 'a prepared transaction' : `pid ${holder.pid}`;
  const parts: string[] = [];
  if (holder.user) parts.push(`user ${holder.user}`);
  if (holder.state)
    parts.push(
      holder.stateSeconds === null ? holder.state : `${holder.state} for ${describeDuration(holder.stateSeconds)}`,
    );
  if (holder.transactionSeconds !== null && holder.transactionSeconds !== holder.stateSeconds)
    parts.push(`transaction open ${describeDuration(holder.transactionSeconds)}`);
  parts.push(`${holder.granted ? 'holds' : 'waits for'} ${holder.mode} on ${holder.table}`);
  const query = holder.query ? `; query: ${holder.query}` : '';
  return `${who} (${parts.join(', ')}${query})`;
}

/** "12 min", "3 s", "2 h 5 min" */
export function describeDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.round((seconds % 3600) / 60);
  return minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`;
}
