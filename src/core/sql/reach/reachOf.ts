/**
 * The reach of statements into the database's own code (SPEC §5 1a), the engine's public entry point. The
 * code version (codeVersion.ts, one small query) is checked on every call; the catalog and every verdict are
 * kept in memory per Db and reused while it is unchanged, so a warm check costs one query and map lookups.
 */
import type { Db } from '../../db/db';
import { describeError } from '../../platform/errors';
import type { ParsedStatement } from '../parse';
import { loadParser } from '../parse';
import { loadCodeCatalog } from './codeCatalog';
import { codeVersion } from './codeVersion';
import type { CodeVersion } from './codeVersion';
import { ReachEngine } from './reachEngine';
import type { StatementReach } from '../../../shared/reachTypes';

interface Cached {
  version: CodeVersion;
  engine: Promise<ReachEngine>;
  /** The engine once loaded (recentReachEngine reads it without a promise). */
  loaded?: ReachEngine;
  /** performance.now() of the last version check that found this version current. */
  checkedAt: number;
}

export interface ReachOptions {
  /**
   * Reuse a version checked less than this long ago instead of asking again (default 0: ask every time).
   * Only for a caller whose reads also run read-only and who accepts that window (`pg-agent guard`).
   */
  versionMaxAgeMs?: number;
}

const engines = new WeakMap<Db, Cached>();

/**
 * The reach of each statement into the database's own code; cached per code version of `db`. It queries
 * `db` itself (db.query): never call it from inside db.withSession, which PGlite serializes (a deadlock).
 */
export async function reachOf(
  db: Db,
  statements: readonly ParsedStatement[],
  options: ReachOptions = {},
): Promise<StatementReach[]> {
  let engine: ReachEngine;
  try {
    engine = await currentReachEngine(db, options);
  } catch (error) {
    // A catalog we may not read (or a connection that failed) is code we cannot see into: held, never "safe".
    return statements.map(() =>
      unknownReach(
        `the database's code could not be read, so what this statement runs is unknown: ${describeError(error)}`,
      ),
    );
  }
  return statements.map((statement) => statementReachOf(engine, statement));
}

/**
 * The engine of `db`'s current code version (checked as reachOf checks it: every call, or once per
 * `versionMaxAgeMs`). A new code version is a new engine object, so whatever a caller keeps per engine
 * (the guard's verdict cache) lives exactly as long as the version it was worked out on. Throws when the
 * catalog cannot be read.
 */
export async function currentReachEngine(db: Db, options: ReachOptions = {}): Promise<ReachEngine> {
  await loadParser();
  const recent = engines.get(db);
  if (recent && options.versionMaxAgeMs && performance.now() - recent.checkedAt < options.versionMaxAgeMs)
    return recent.engine;
  if (!options.versionMaxAgeMs) return checkVersion(db);
  // A caller that accepts a version this old also accepts one being checked now (begun after it was due):
  // concurrent clients of the guard share one query instead of each sending its own.
  let checking = inFlight.get(db);
  if (!checking) {
    const started: Promise<ReachEngine> = checkVersion(db).finally(() => {
      if (inFlight.get(db) === started) inFlight.delete(db);
    });
    checking = started;
    inFlight.set(db, checking);
  }
  return checking;
}

const inFlight = new WeakMap<Db, Promise<ReachEngine>>();

/**
 * The engine `currentReachEngine(db, { versionMaxAgeMs })` would return now without asking the database (its
 * version checked less than `versionMaxAgeMs` ago, its catalog loaded), and how long ago its version was checked
 * (ms), or undefined: a caller with a synchronous fast path (the guard's cached verdicts) takes it as
 * currentReachEngine would, and calls that otherwise.
 */
export function recentReachEngine(
  db: Db,
  versionMaxAgeMs: number,
): { engine: ReachEngine; checkedMsAgo: number } | undefined {
  const recent = engines.get(db);
  if (!recent?.loaded) return undefined;
  const checkedMsAgo = performance.now() - recent.checkedAt;
  return checkedMsAgo < versionMaxAgeMs ? { engine: recent.loaded, checkedMsAgo } : undefined;
}

async function checkVersion(db: Db): Promise<ReachEngine> {
  const version = await codeVersion(db, engines.get(db)?.version);
  // Read again after the await: a concurrent call may have started loading this very version.
  let cached = engines.get(db);
  if (cached?.version.version !== version.version) {
    const loading: Cached = {
      version,
      engine: loadCodeCatalog(db).then((catalog) => (loading.loaded = new ReachEngine(catalog))),
      checkedAt: performance.now(),
    };
    cached = loading;
    engines.set(db, cached);
    // A failed load is not kept: the next call tries again.
    const failed = cached;
    failed.engine.catch(() => {
      if (engines.get(db) === failed) engines.delete(db);
    });
  }
  cached.version = version;
  cached.checkedAt = performance.now();
  return cached.engine;
}

function statementReachOf(engine: ReachEngine, statement: ParsedStatement): StatementReach {
  try {
    return engine.statementReach(statement);
  } catch (error) {
    // A tree or catalog the walker did not expect: unknown code, held, never a crash or a silent "safe".
    return unknownReach(`what this statement runs could not be worked out: ${describeError(error)}`);
  }
}

function unknownReach(reason: string): StatementReach {
  return { entries: [], effects: [{ kind: 'unknown', reason }], sequences: [] };
}

/** Forgets what was cached for `db` (tests; a connection whose rights changed). */
export function forgetReach(db: Db): void {
  engines.delete(db);
  // A check already under way may have read the catalog before what made the caller forget it.
  inFlight.delete(db);
}
