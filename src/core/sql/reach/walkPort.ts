/**
 * The reach engine as the walk's parts see it (SPEC §5 1a). The walk is mutually recursive across files (a
 * statement's reach needs the writes it makes, whose triggers hold statements): the parts reach the steps
 * that live above them through this port, which reachEngine.ts wires, so no part imports a file that
 * imports it back.
 */
import type { Node } from 'libpg-query';
import type { CodeCatalog, CodeFunction, CodeRelation } from './codeCatalog';
import type { Found, Judgement } from './reachFound';
import type { Rec } from '../parseTree';

export interface WalkCtx {
  found: Found;
  /** How the code being walked is reached ('' = the statement itself; "view public.v", "trigger …"). */
  via: string;
  /** Nesting of views, policies, FK actions and rules inside this walk (bounded). */
  depth: number;
  /** Relations and writes already expanded in this walk ("r:oid:via", "w:oid:event"). */
  seen: Set<string>;
  /** Qualified names of the sequences a column default depends on, to name its nextval('s') exactly. */
  sequences?: readonly string[];
}

export type WriteEvent = 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE';

export interface WriteOptions {
  /** INSERT: the columns given (their defaults do not run); undefined = all defaults may run. */
  givenColumns?: ReadonlySet<string>;
  /** UPDATE: columns set to DEFAULT. */
  defaultColumns?: ReadonlySet<string>;
  /** TRUNCATE … CASCADE. */
  cascade?: boolean;
}

/** The engine: its catalog, memo and bounds, and the steps statementReach.ts calls (in reachWalk.ts and tableEvents.ts). */
export interface WalkEngine {
  readonly catalog: CodeCatalog;
  /** A function's judgement, memoized per oid. */
  judge(fn: CodeFunction): Judgement;
  ruleJudgement(def: string, compute: () => Judgement): Judgement;
  judgeBlock(createFunctionSql: string): Judgement;
  boundHit(): void;
  parseStatements(sql: string): Node[] | Error;
  parseExpression(expr: string): Node[] | Error;
  /** reachWalk.ts: reading a relation (a view expanded, its policies). */
  readRelation(rel: CodeRelation, ctx: WalkCtx, viewVerb?: string): void;
  /** reachWalk.ts: a function reached by its oid. */
  reachFunctionOid(oid: number, via: string, ctx: WalkCtx, quietIfSafe?: boolean): void;
  /** reachWalk.ts: the relations a RangeVar may name. */
  relationsNamed(node: Rec): CodeRelation[];
  /** tableEvents.ts: everything a write of `event` to `rel` runs. */
  applyWrite(rel: CodeRelation, event: WriteEvent, ctx: WalkCtx, options?: WriteOptions): void;
  /** tableEvents.ts: the code an index of `rel` runs (expressions, predicates, operator classes). */
  reachIndexes(rel: CodeRelation, ctx: WalkCtx): void;
}
