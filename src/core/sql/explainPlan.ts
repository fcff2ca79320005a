/**
 * EXPLAIN without ANALYZE, always inside BEGIN READ ONLY with the read timeouts (nothing is executed,
 * and the transaction makes sure of it), and the JSON plan of a read as a tree a person can scan: each
 * node with its estimated cost and rows, its own share of the plan's cost (its total minus its
 * children's), and the node that dominates marked. Explain (issue 15) takes reads only; the job's
 * explain_sql tool also takes a data write, which is planned, never run.
 */
import type { Db } from '../db/db';
import { AgentError } from '../platform/errors';
import type { StatementClassification } from './classification';
import { classifySql } from './classify';
import { loadParser } from './parse';
import { setLocalTimeouts } from './runRead';
import { assertReachAllows } from './reach/checkSql';

export interface ExplainLimits {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

/** EXPLAIN (FORMAT …) of one statement in a READ ONLY transaction that is rolled back. */
export async function explainReadOnly(
  db: Db,
  statementSql: string,
  format: 'text' | 'json',
  limits: ExplainLimits,
): Promise<string> {
  // Planning evaluates functions (an IMMUTABLE label can lie): nothing whose reach acts beyond READ ONLY.
  await assertReachAllows(db, statementSql, 'explain');
  return db.withSession(async (session) => {
    await session.query('BEGIN READ ONLY');
    try {
      await setLocalTimeouts(session, limits.statementTimeoutMs, limits.lockTimeoutMs);
      const result = await session.queryText(
        format === 'json' ? `EXPLAIN (FORMAT JSON) ${statementSql}` : `EXPLAIN ${statementSql}`,
      );
      return result.rows.map((row) => row[0] ?? '').join('\n');
    } finally {
      await session.query('ROLLBACK');
    }
  });
}

export interface PlanNode {
  /** "Seq Scan on public.orders", "Hash Join", "Index Scan using orders_pkey on public.orders". */
  label: string;
  /** Join or index condition, filter, sort key: what the node does, in the planner's words. */
  detail: string;
  startupCost: number;
  totalCost: number;
  rows: number;
  /** This node's own part of the plan's total cost (its total minus its children's totals). */
  selfCost: number;
  /** selfCost as a share of all nodes' own costs, 0–1 (not of the root's total: a Limit costs less than its input). */
  share: number;
  /** The node with the largest own cost in the whole plan. */
  dominant: boolean;
  children: PlanNode[];
}

interface RawPlan {
  'Node Type': string;
  'Relation Name'?: string;
  Schema?: string;
  Alias?: string;
  'Index Name'?: string;
  'Join Type'?: string;
  Strategy?: string;
  'Startup Cost': number;
  'Total Cost': number;
  'Plan Rows': number;
  'Hash Cond'?: string;
  'Merge Cond'?: string;
  'Join Filter'?: string;
  'Index Cond'?: string;
  Filter?: string;
  'Sort Key'?: string[];
  'Group Key'?: string[];
  Plans?: RawPlan[];
}

function labelOf(raw: RawPlan): string {
  const type =
    raw['Join Type'] && raw['Join Type'] !== 'Inner' && /Join|Nested Loop/.test(raw['Node Type'])
      ? `${raw['Node Type']} (${raw['Join Type']})`
      : raw['Strategy'] && raw['Node Type'] === 'Aggregate'
        ? `${raw['Strategy']} Aggregate`
        : raw['Node Type'];
  const index = raw['Index Name'] ? ` using ${raw['Index Name']}` : '';
  const relation = raw['Relation Name']
    ? ` on ${raw['Schema'] ? `${raw['Schema']}.` : ''}${raw['Relation Name']}${raw['Alias'] && raw['Alias'] !== raw['Relation Name'] ? ` ${raw['Alias']}` : ''}`
    : '';
  return `${type}${index}${relation}`;
}

function detailOf(raw: RawPlan): string {
  const parts: string[] = [];
  for (const key of ['Hash Cond', 'Merge Cond', 'Index Cond', 'Join Filter', 'Filter'] as const) {
    const value = raw[key];
    if (value) parts.push(`${key === 'Filter' ? 'filter' : key.toLowerCase()}: ${value}`);
  }
  if (raw['Sort Key']?.length) parts.push(`sort: ${raw['Sort Key'].join(', ')}`);
  if (raw['Group Key']?.length) parts.push(`group: ${raw['Group Key'].join(', ')}`);
  return parts.join(' · ');
}

/** The plan of `EXPLAIN (FORMAT JSON)` output as a tree; the dominating node is the one with the largest own cost. */
export function planTree(explainJson: string): PlanNode {
  let parsed: unknown;
  try {
    parsed = JSON.parse(explainJson);
  } catch (error) {
    throw new AgentError(
      'INTERNAL',
      'PostgreSQL answered EXPLAIN (FORMAT JSON) with something that is not JSON.',
      undefined,
      { cause: error },
    );
  }
  const root = Array.isArray(parsed) ? (parsed[0] as { Plan?: RawPlan } | undefined)?.Plan : undefined;
  if (!root) throw new AgentError('INTERNAL', 'EXPLAIN (FORMAT JSON) gave no plan.');
  const build = (raw: RawPlan): PlanNode => {
    const children = (raw.Plans ?? []).map(build);
    const selfCost = Math.max(0, raw['Total Cost'] - children.reduce((sum, c) => sum + c.totalCost, 0));
    return {
      label: labelOf(raw),
      detail: detailOf(raw),
      startupCost: raw['Startup Cost'],
      totalCost: raw['Total Cost'],
      rows: raw['Plan Rows'],
      selfCost,
      share: 0,
      dominant: false,
      children,
    };
  };
  const tree = build(root);
  const nodes: PlanNode[] = [];
  const visit = (node: PlanNode) => {
    nodes.push(node);
    node.children.forEach(visit);
  };
  visit(tree);
  const work = Math.max(
    nodes.reduce((sum, n) => sum + n.selfCost, 0),
    Number.EPSILON,
  );
  let top = tree;
  for (const node of nodes) {
    node.share = node.selfCost / work;
    if (node.selfCost > top.selfCost) top = node;
  }
  top.dominant = true;
  return tree;
}

/** The one read to explain, as the classifier sees it; anything else is refused with why. */
export async function readToExplain(sql: string): Promise<StatementClassification> {
  await loadParser();
  const classification = classifySql(sql);
  const [statement] = classification.statements;
  if (classification.statements.length !== 1 || !statement) {
    throw new AgentError(
      'BAD_INPUT',
      `Explain takes one statement; this text has ${classification.statements.length}.`,
      'Select the one statement to explain.',
    );
  }
  if (statement.class !== 'read' || statement.decision !== 'run' || statement.kind !== 'SelectStmt') {
    throw new AgentError(
      'SQL_REFUSED',
      `Explain shows the plan of a read only; this is ${statement.class === 'read' ? 'a read with side effects' : `a ${statement.class} statement`} (${statement.kind}).`,
      'A write shows its exact impact in Run SQL with Review instead: the rows per table it would change, nothing run until you approve.',
    );
  }
  return statement;
}

/** The plan tree of one read (refused for anything else), explained READ ONLY without ANALYZE. */
export async function explainRead(db: Db, sql: string, limits: ExplainLimits): Promise<PlanNode> {
  const statement = await readToExplain(sql);
  return planTree(await explainReadOnly(db, statement.sql, 'json', limits));
}
