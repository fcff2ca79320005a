/**
 * The reads the guard passes, as the query history keeps them. An application's reads come thousands a second:
 * one history line each filled a database's history files in seconds and rotated away the writes and their
 * tickets. So the first read of a statement (by its shape: the verdict cache's key, numbers abstracted) by a
 * guard user in a window is recorded at once, as before; the others of that window are counted and recorded as
 * one entry with `repeats` when the window ends (and when the guard stops).
 */
import type { HistoryRun } from '../../core/sql/history/queryHistory';
import { statementKey } from '../judge/verdictCache';

/** How long repeats are counted before their entry is written. */
const REPEAT_WINDOW_MS = 60_000;
/** Shapes counted at once; past it, a read is recorded on its own (memory stays bounded). */
const MAX_SHAPES = 10_000;

interface Counted {
  user: string;
  /** The first repeat: its text and time are the entry's. */
  sql?: string;
  startedAt?: number;
  repeats: number;
}

export class RepeatedReads {
  private readonly counted = new Map<string, Counted>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly record: (run: HistoryRun) => void,
    private readonly windowMs = REPEAT_WINDOW_MS,
  ) {}

  /** A read `user` sent and the guard passed. */
  passed(sql: string, user: string): void {
    const now = Date.now();
    const shape = statementKey(sql)?.key;
    const key = shape === undefined ? undefined : `${user}\0${shape}`;
    const seen = key === undefined ? undefined : this.counted.get(key);
    if (seen) {
      if (seen.repeats++ === 0) {
        seen.sql = sql;
        seen.startedAt = now;
      }
      return;
    }
    if (key !== undefined && this.counted.size < MAX_SHAPES) {
      this.counted.set(key, { user, repeats: 0 });
      this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
    }
    this.record(readRun(sql, user, now));
  }

  /** Records the window's repeats and starts a new window. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const seen of this.counted.values())
      if (seen.repeats > 0) this.record({ ...readRun(seen.sql!, seen.user, seen.startedAt!), repeats: seen.repeats });
    this.counted.clear();
  }
}

function readRun(sql: string, who: string, startedAt: number): HistoryRun {
  return { kind: 'read', sql, startedAt, ms: null, rows: null, who };
}
