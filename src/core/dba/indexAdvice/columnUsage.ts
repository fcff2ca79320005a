/**
 * Which columns of which tables a SELECT filters, joins, sorts and groups on, read from PostgreSQL's own parse
 * tree (libpg-query): the raw material of index candidates. Pure: names are resolved against the catalog later.
 */
import type { Node } from 'libpg-query';

export type ColumnRole = 'eq' | 'range' | 'join' | 'order' | 'group';

export interface TableRef {
  /** As PostgreSQL reads it, quoted for to_regclass: "orders" or "sales"."orders" (search_path applies to a bare name). */
  name: string;
  /** The alias, or the bare table name when there is none. */
  alias: string;
}

export interface ColumnUse {
  /** The alias or table name qualifying the column; undefined when the column was written bare. */
  qualifier: string | undefined;
  column: string;
  role: ColumnRole;
}

export interface QueryUsage {
  tables: TableRef[];
  uses: ColumnUse[];
  /** Columns in the select list by qualifier ("" for bare ones); `star` when it has * or expressions we cannot list. */
  selected: { star: boolean; columns: { qualifier: string | undefined; column: string }[] };
}

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const sval = (v: unknown): string | undefined =>
  isRec(v) && isRec(v.String) && typeof v.String.sval === 'string' ? v.String.sval : undefined;

const RANGE_OPS = new Set(['<', '>', '<=', '>=']);

/** The usage of a SelectStmt tree (the top query; CTEs and subqueries in FROM are read as their own queries). */
export function columnUsage(tree: Node): QueryUsage[] {
  const out: QueryUsage[] = [];
  const visitSelect = (select: Rec) => {
    for (const arm of [select.larg, select.rarg]) if (isRec(arm)) visitSelect(arm);
    const withClause = isRec(select.withClause) ? select.withClause : undefined;
    for (const cte of list(withClause?.ctes)) {
      const query =
        isRec(cte) && isRec(cte.CommonTableExpr) && isRec(cte.CommonTableExpr.ctequery)
          ? cte.CommonTableExpr.ctequery.SelectStmt
          : undefined;
      if (isRec(query)) visitSelect(query);
    }
    const usage: QueryUsage = { tables: [], uses: [], selected: { star: false, columns: [] } };
    for (const from of list(select.fromClause)) readFrom(from, usage, visitSelect);
    if (usage.tables.length === 0) return;
    readCondition(select.whereClause, usage);
    for (const target of list(select.targetList)) {
      const val = isRec(target) && isRec(target.ResTarget) ? target.ResTarget.val : undefined;
      const ref = columnRef(val);
      if (ref === 'star' || ref === undefined) usage.selected.star = true;
      else usage.selected.columns.push(ref);
    }
    for (const sort of list(select.sortClause)) {
      const ref = isRec(sort) && isRec(sort.SortBy) ? columnRef(sort.SortBy.node) : undefined;
      if (ref && ref !== 'star') usage.uses.push({ ...ref, role: 'order' });
    }
    for (const group of list(select.groupClause)) {
      const ref = columnRef(group);
      if (ref && ref !== 'star') usage.uses.push({ ...ref, role: 'group' });
    }
    out.push(usage);
  };
  const root = isRec(tree) ? (tree as Rec).SelectStmt : undefined;
  if (isRec(root)) visitSelect(root);
  return out;
}

function readFrom(node: unknown, usage: QueryUsage, visitSelect: (s: Rec) => void): void {
  if (!isRec(node)) return;
  if (isRec(node.RangeVar)) {
    const rv = node.RangeVar;
    const relname = typeof rv.relname === 'string' ? rv.relname : undefined;
    if (!relname) return;
    const schema = typeof rv.schemaname === 'string' ? rv.schemaname : undefined;
    const alias = isRec(rv.alias) && typeof rv.alias.aliasname === 'string' ? rv.alias.aliasname : relname;
    const quote = (part: string) => `"${part.replaceAll('"', '""')}"`;
    usage.tables.push({ name: schema ? `${quote(schema)}.${quote(relname)}` : quote(relname), alias });
  } else if (isRec(node.JoinExpr)) {
    readFrom(node.JoinExpr.larg, usage, visitSelect);
    readFrom(node.JoinExpr.rarg, usage, visitSelect);
    readCondition(node.JoinExpr.quals, usage);
  } else if (
    isRec(node.RangeSubselect) &&
    isRec(node.RangeSubselect.subquery) &&
    isRec(node.RangeSubselect.subquery.SelectStmt)
  ) {
    visitSelect(node.RangeSubselect.subquery.SelectStmt);
  }
}

function columnRef(node: unknown): { qualifier: string | undefined; column: string } | 'star' | undefined {
  if (!isRec(node)) return undefined;
  if (isRec(node.TypeCast)) return columnRef(node.TypeCast.arg);
  if (!isRec(node.ColumnRef)) return undefined;
  const fields = list(node.ColumnRef.fields);
  if (fields.some((f) => isRec(f) && 'A_Star' in f)) return 'star';
  const names = fields.map(sval);
  if (names.some((n) => n === undefined)) return undefined;
  if (names.length === 1) return { qualifier: undefined, column: names[0] as string };
  return { qualifier: names[names.length - 2], column: names[names.length - 1] as string };
}

function readCondition(node: unknown, usage: QueryUsage): void {
  if (!isRec(node)) return;
  if (isRec(node.BoolExpr)) {
    // Only AND-ed conditions narrow a scan the way an index can serve; OR and NOT arms are left to the planner.
    if (node.BoolExpr.boolop === 'AND_EXPR') for (const arg of list(node.BoolExpr.args)) readCondition(arg, usage);
    return;
  }
  if (isRec(node.NullTest)) {
    const ref = columnRef(node.NullTest.arg);
    if (ref && ref !== 'star') usage.uses.push({ ...ref, role: 'eq' });
    return;
  }
  if (!isRec(node.A_Expr)) return;
  const expr = node.A_Expr;
  const op = sval(list(expr.name)[0]);
  const left = columnRef(expr.lexpr);
  const right = columnRef(expr.rexpr);
  const l = left && left !== 'star' ? left : undefined;
  const r = right && right !== 'star' ? right : undefined;
  if (expr.kind === 'AEXPR_OP' && op === '=' && l && r) {
    usage.uses.push({ ...l, role: 'join' }, { ...r, role: 'join' });
    return;
  }
  const column = l ?? r;
  if (!column || (l && r)) return;
  if ((expr.kind === 'AEXPR_OP' && op === '=') || expr.kind === 'AEXPR_IN') usage.uses.push({ ...column, role: 'eq' });
  else if (
    (expr.kind === 'AEXPR_OP' && op !== undefined && RANGE_OPS.has(op)) ||
    expr.kind === 'AEXPR_BETWEEN' ||
    (expr.kind === 'AEXPR_LIKE' && op === '~~')
  ) {
    usage.uses.push({ ...column, role: 'range' });
  }
}
