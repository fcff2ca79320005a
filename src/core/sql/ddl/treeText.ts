/**
 * Parts of a statement's text read back from its tree: a column type, the functions an expression calls,
 * an expression's SQL (the tree holds start locations only) and the text inside CHECK ( … ).
 */
import type { Rec } from '../parseTree';
import { arr, names, rec, sval } from '../parseTree';
import type { PlanSource } from './ddlPlan';

/** A column type as written (`varchar(20)`, `numeric(10,2)[]`), without pg_catalog. */
export function typeText(typeName: Rec | undefined): string {
  const parts = arr(typeName, 'names')
    .map((p) => sval(p) ?? '?')
    .filter((p) => p !== 'pg_catalog');
  const mods = arr(typeName, 'typmods')
    .map((m) => rec(rec(m, 'A_Const'), 'ival')?.ival)
    .filter((v): v is number => typeof v === 'number')
    .map(String);
  const bounds = arr(typeName, 'arrayBounds').length > 0 ? '[]' : '';
  return `${parts.join('.')}${mods.length > 0 ? `(${mods.join(',')})` : ''}${bounds}`;
}

/** Every function name called in an expression (to look up its volatility in the catalog). */
export function functionNames(expr: unknown): string[] {
  const found: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (typeof v !== 'object' || v === null) return;
    const call = rec(v, 'FuncCall');
    if (call) found.push(names(call.funcname));
    // SQLValueFunction (now(), current_timestamp) is stable: no rewrite; nextval() shows up as a FuncCall.
    Object.values(v).forEach(visit);
  };
  visit(expr);
  return found;
}

/**
 * The SQL text of an expression: from the earliest location found in its tree to the end of the balanced
 * expression (the tree holds start locations only). Used to build read-only checks and safer statements.
 */
export function exprText(source: PlanSource, expr: unknown): string {
  const start = earliestLocation(expr);
  if (start === undefined) return '';
  return scanExpression(source.input, source.indexOfByte(start));
}

/** The text inside CHECK ( … ) of a constraint. */
export function checkText(source: PlanSource, con: Rec): string {
  const sql = source.input;
  const from = source.indexOfByte(typeof con.location === 'number' ? con.location : 0);
  const at = sql.toUpperCase().indexOf('CHECK', from);
  const open = sql.indexOf('(', at);
  if (at < 0 || open < 0) return '';
  const end = matchParen(sql, open);
  return sql.slice(open + 1, end).trim();
}

function earliestLocation(v: unknown): number | undefined {
  let min: number | undefined;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (typeof x !== 'object' || x === null) return;
    for (const [key, value] of Object.entries(x)) {
      if (key === 'location' && typeof value === 'number' && value >= 0)
        min = min === undefined ? value : Math.min(min, value);
      else visit(value);
    }
  };
  visit(v);
  return min;
}

/** From `start`, the expression up to a top-level comma, closing parenthesis or keyword that ends a column definition. */
function scanExpression(sql: string, start: number): string {
  let depth = 0;
  let i = start;
  for (; i < sql.length; i++) {
    const ch = sql[i] ?? '';
    if (ch === "'" || ch === '"') {
      i = skipQuoted(sql, i);
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && (ch === ',' || ch === ';')) break;
    else if (
      depth === 0 &&
      /\s/.test(ch) &&
      /^\s+(NOT\s+NULL|NULL|CHECK|REFERENCES|UNIQUE|PRIMARY|CONSTRAINT|COLLATE|GENERATED)\b/i.test(sql.slice(i))
    )
      break;
  }
  return sql.slice(start, i).trim();
}

function matchParen(sql: string, open: number): number {
  let depth = 0;
  for (let i = open; i < sql.length; i++) {
    const ch = sql[i] ?? '';
    if (ch === "'" || ch === '"') i = skipQuoted(sql, i);
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i;
  }
  return sql.length;
}

function skipQuoted(sql: string, at: number): number {
  const quote = sql[at];
  for (let i = at + 1; i < sql.length; i++) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i++;
      else return i;
    }
  }
  return sql.length;
}
