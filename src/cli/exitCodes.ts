/** Exit codes of `pg-agent` (SPEC §6); scripts rely on them, so they never change meaning. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Failed at run time (database error, timeout); nothing committed. */
  failed: 1,
  /** Bad input: empty, unparsable, placeholders without values, NUL bytes, unknown flag. */
  badInput: 2,
  /** Held for approval, not executed (the ticket is in the output). */
  held: 3,
  /** Refused by policy. */
  refused: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
