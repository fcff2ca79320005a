/**
 * The check validateSql made of the current SQL (parse, classification with reach, the first statement's
 * planned rows), handed in this process's memory to the step that runs or previews it, so the SQL is parsed
 * and EXPLAINed once. The graph's state is checkpointed to files: a check is never read back from there.
 */
import type { CheckedSql } from '../sql/reach/checkSql';

/** Checks waiting for their step, by SQL text; each is taken once. */
export class CarriedChecks {
  private readonly waiting = new Map<string, CheckedSql>();

  keep(checked: CheckedSql): void {
    this.waiting.delete(checked.sql);
    this.waiting.set(checked.sql, checked);
    // Runs that stopped between the check and its step (an error, a repair) leave theirs: keep the latest few.
    for (const sql of this.waiting.keys()) {
      if (this.waiting.size <= MAX_WAITING) break;
      this.waiting.delete(sql);
    }
  }

  /** The check of exactly `sql`, if one waits (runSql checks again when it is not for its database). */
  take(sql: string): CheckedSql | undefined {
    const checked = this.waiting.get(sql);
    this.waiting.delete(sql);
    return checked;
  }
}

const MAX_WAITING = 16;
