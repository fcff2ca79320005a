/**
 * The guard's own SQLSTATEs, in class "PA" (no PostgreSQL class uses it, so no client mistakes them for
 * a server error): a client, a migration tool or a script can tell "held for a person" from a failure.
 */
export const GUARD_SQLSTATE = {
  /** Held: a ticket waits for a person; send the identical statement again once it is approved. */
  held: 'PA001',
  /** Refused by the guard's rules (never runs through it, approved or not). */
  refused: 'PA002',
  /** The guard could not judge or run it (its database or ticket store failed); nothing ran. */
  failed: 'PA003',
} as const;
