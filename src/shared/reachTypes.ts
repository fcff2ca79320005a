/**
 * What a statement makes the database's own code do (SPEC §5 1a): the functions it reaches through calls,
 * operators, casts, types, views, defaults, generated columns, domain checks, RLS policies, index
 * expressions, triggers and rules (FK cascades included) and event triggers, each with a verdict.
 * Produced by reachOf.ts from the parse tree and the catalog; merged into the classification by checkSql.ts.
 */

/** SPEC §6 `impact --json` "reach[].verdict". */
export type ReachVerdict = 'safe' | 'side-effect' | 'unknown';

/** One piece of the database's code the statement would run (SPEC §6 `reach`; exactly these four fields). */
export interface ReachEntry {
  /** The function, qualified, with its argument types: "public.rt_shell()", "pg_catalog.lower(text)". */
  function: string;
  /**
   * How the statement reaches it, for a person: "called directly", "operator public.=== (integer, integer)",
   * "view public.v", "trigger t_del on public.t (BEFORE DELETE, row)", "default of public.t.id",
   * "ON DELETE CASCADE to public.order_items → trigger …", "event trigger et (ddl_command_end)",
   * "called by public.f(integer)".
   */
  via: string;
  verdict: ReachVerdict;
  /** What it does, when not safe: "runs COPY … TO PROGRAM (a shell command on the server)". */
  effect?: string;
}

/**
 * What an effect means on each path:
 * - `write`: changes rows of this database. Not a read; a ROLLBACK undoes it, so a preview may run it.
 * - `sequence`: advances a sequence. Not a read; previewable, disclosed (values are never given back).
 * - `ddl`: changes or locks other objects (DDL, LOCK). Not a read; never previewed (it can block others).
 * - `irreversible`: what ROLLBACK does not undo — a shell or file on the server, another connection (dblink,
 *   postgres_fdw), ending or signalling sessions, session-level advisory locks or settings, notifications.
 *   Never a read, never previewed; risk at least HIGH (it happens again at execution).
 * - `privileged`: reads the server's files through catalog views (pg_hba_file_rules, pg_file_settings, …).
 * - `unknown`: code we cannot see into (C and other languages, dynamic EXECUTE of a non-constant string, a
 *   body that does not parse, a catalog we may not read, depth or size bounds reached). Never a read, never
 *   previewed; risk at least MEDIUM.
 */
export type ReachEffectKind = 'write' | 'sequence' | 'ddl' | 'irreversible' | 'privileged' | 'unknown';

export interface ReachEffect {
  kind: ReachEffectKind;
  /** A person's sentence naming the function and the way in: "rt_shell() (trigger t_del on public.t) runs COPY … TO PROGRAM". */
  reason: string;
}

/** The reach of one statement. */
export interface StatementReach {
  /** Everything reached, safe entries included, without duplicates (function + via), in discovery order. */
  entries: ReachEntry[];
  /** Each effect found (empty when everything reached is safe), worst first. */
  effects: ReachEffect[];
  /** Sequences the reach advances ("public.orders_id_seq"), for the disclosure a direct nextval gets. */
  sequences: string[];
}
