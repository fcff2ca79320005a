/**
 * The reach engine for one code version of one database (SPEC §5 1a): the catalog, every function verdict
 * (memoized per oid), parsed catalog text, and the bounds of one statement's walk (depth 12, 400 functions).
 * Everything here is synchronous: the catalog is loaded before (reachOf.ts).
 */
import type { CodeCatalog, CodeFunction } from './codeCatalog';
import { bodyCtx, judgeFunction, judgePlpgsqlText } from './judgeFunction';
import { Found } from './reachFound';
import type { Judgement } from './reachFound';
import type { StatementReach } from '../../../shared/reachTypes';
import { MAX_DEPTH, reachFunctionOid, readRelation, relationsNamed, walkTree } from './reachWalk';
import { applyWrite, reachIndexes } from './tableEvents';
import type { CodeRelation } from './codeCatalog';
import type { Rec } from '../parseTree';
import type { WalkCtx, WalkEngine, WriteEvent, WriteOptions } from './walkPort';
import { AgentError } from '../../platform/errors';
import type { ParsedStatement } from '../parse';
import { parseSql } from '../parse';
import type { Node } from 'libpg-query';

/** Functions judged (not found in the memo) for one statement before the rest is unknown code. */
export const MAX_FUNCTIONS = 400;
const STATEMENT_CACHE = 500;

/** The one engine; as a WalkEngine it wires the steps the walk's parts reach through walkPort.ts. */
export class ReachEngine implements WalkEngine {
  private readonly ruleJudgements = new Map<string, Judgement>();
  private readonly judgements = new Map<number, Judgement>();
  private readonly statements = new Map<string, Node[] | Error>();
  private readonly expressions = new Map<string, Node[] | Error>();
  private readonly results = new Map<string, StatementReach>();
  /** Functions being judged, innermost last (a call to one of them is a cycle: already being counted). */
  private readonly stack: number[] = [];
  private judged = 0;
  private bounds = 0;

  constructor(readonly catalog: CodeCatalog) {}

  /** The reach of one statement (cached by its text for this code version). */
  statementReach(statement: ParsedStatement): StatementReach {
    const cached = this.results.get(statement.sql);
    if (cached) return cached;
    this.judged = 0;
    const found = new Found(false);
    walkTree(this, statement.tree, { found, via: '', depth: 0, seen: new Set() });
    const reach = found.statementReach();
    if (this.results.size >= STATEMENT_CACHE) this.results.delete(this.results.keys().next().value ?? '');
    this.results.set(statement.sql, reach);
    return reach;
  }

  /** A function's judgement: memoized per oid, unless a bound or a cycle made it partial. */
  judge(fn: CodeFunction): Judgement {
    const memo = this.judgements.get(fn.oid);
    if (memo) return memo;
    if (this.stack.includes(fn.oid)) {
      // A cycle (f calls g calls f): f's effects are already being collected where f was first reached.
      this.bounds++;
      return { problems: [], entries: [], sequences: [] };
    }
    if (this.stack.length >= MAX_DEPTH) {
      this.bounds++;
      return unknown(`calls functions nested deeper than ${MAX_DEPTH} levels`);
    }
    if (++this.judged > MAX_FUNCTIONS) {
      this.bounds++;
      return unknown(`reaches more than ${MAX_FUNCTIONS} functions`);
    }
    const boundsBefore = this.bounds;
    this.stack.push(fn.oid);
    let judgement: Judgement;
    try {
      judgement = judgeFunction(this, fn);
    } catch (error) {
      // Never a crash, never a silent "safe": what we could not judge is unknown code.
      judgement = unknown(`could not be judged: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.stack.pop();
    }
    if (this.bounds === boundsBefore) this.judgements.set(fn.oid, judgement);
    return judgement;
  }

  /** A rule's judgement by its definition, memoized like a function's (not when a bound or cycle cut it). */
  ruleJudgement(def: string, compute: () => Judgement): Judgement {
    const cached = this.ruleJudgements.get(def);
    if (cached) return cached;
    const boundsBefore = this.bounds;
    const judgement = compute();
    if (this.bounds === boundsBefore) this.ruleJudgements.set(def, judgement);
    return judgement;
  }

  /** A PL/pgSQL block (a DO statement wrapped as CREATE FUNCTION text), judged like a function body. */
  judgeBlock(createFunctionSql: string): Judgement {
    const ctx = bodyCtx('a DO block');
    judgePlpgsqlText(this, createFunctionSql, ctx);
    return ctx.found.judgement();
  }

  /** Notes that a bound cut a walk short, so that what contains it is not memoized as complete. */
  boundHit(): void {
    this.bounds++;
  }

  readRelation(rel: CodeRelation, ctx: WalkCtx, viewVerb?: string): void {
    readRelation(this, rel, ctx, viewVerb);
  }

  reachFunctionOid(oid: number, via: string, ctx: WalkCtx, quietIfSafe?: boolean): void {
    reachFunctionOid(this, oid, via, ctx, quietIfSafe);
  }

  relationsNamed(node: Rec): CodeRelation[] {
    return relationsNamed(this, node);
  }

  applyWrite(rel: CodeRelation, event: WriteEvent, ctx: WalkCtx, options?: WriteOptions): void {
    applyWrite(this, rel, event, ctx, options);
  }

  reachIndexes(rel: CodeRelation, ctx: WalkCtx): void {
    reachIndexes(this, rel, ctx);
  }

  /** Statements of stored SQL text (a body, a view, a rule, an index), parsed once; an Error if they do not. */
  parseStatements(sql: string): Node[] | Error {
    let trees = this.statements.get(sql);
    if (trees === undefined) {
      trees = parseTrees(sql);
      this.statements.set(sql, trees);
    }
    return trees;
  }

  /** An expression stored in the catalog (default, check, policy), parsed once as SELECT <expr>. */
  parseExpression(expr: string): Node[] | Error {
    let trees = this.expressions.get(expr);
    if (trees === undefined) {
      trees = parseTrees(`SELECT ${expr}`);
      this.expressions.set(expr, trees);
    }
    return trees;
  }
}

function parseTrees(sql: string): Node[] | Error {
  try {
    return parseSql(sql).statements.map((s) => s.tree);
  } catch (error) {
    if (error instanceof AgentError && error.code === 'SQL_EMPTY') return [];
    return error instanceof Error ? error : new Error(String(error));
  }
}

function unknown(what: string): Judgement {
  return { problems: [{ kind: 'unknown', what }], entries: [], sequences: [] };
}
