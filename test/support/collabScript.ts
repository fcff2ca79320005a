/**
 * Scripted model replies of a collaborative planning session, told apart by what the request asks (the two
 * analyses run in parallel, so order alone cannot say which reply is whose).
 */
import type { RecordedRequest, Reply, Rule } from './scriptedModelServer';

export const isAnalysis = (perspective: 'data/architecture' | 'implementation/SQL') => (r: RecordedRequest) =>
  r.text.includes(`Your perspective: ${perspective}`);
export const isReviewOf = (label: 'A' | 'B') => (r: RecordedRequest) =>
  r.text.includes("You review another analyst's work") && r.text.includes(`Analysis ${label}:`);
export const isSynthesis = (r: RecordedRequest) => r.text.includes('Synthesize the analyses');
export const isPlan = (r: RecordedRequest) => r.text.includes('Write the implementation plan');

export const CUTOFF_DELETE = "DELETE FROM orders WHERE status = 'cancelled' AND created_at < '2024-03-01'";

export interface Sql {
  sql: string;
  purpose: string;
  kind: 'read' | 'write' | 'ddl';
  objects: string[];
  expectedRows?: number | null;
}

export function analysis(name: string, sql: Sql[], questions: string[] = []) {
  return {
    understanding: 'Cancelled orders older than the cutoff should leave the orders table.',
    approaches: [{ name, description: `${name}: do it in one transaction.`, effort: 'low', sql }],
    risks: ['order_items rows cascade with their orders'],
    assumptions: ['cancelled orders are not needed for reporting'],
    questions,
  };
}

export const GOOD_SQL: Sql[] = [
  {
    sql: "SELECT count(*) FROM orders WHERE status = 'cancelled' AND created_at < '2024-03-01'",
    purpose: 'how many',
    kind: 'read',
    objects: ['orders'],
  },
  { sql: CUTOFF_DELETE, purpose: 'delete them', kind: 'write', objects: ['orders', 'order_items', 'audit_log'] },
];

export function review(agreements: number, disagreements: number, newInsights: string[] = []) {
  return {
    agreements: Array.from({ length: agreements }, (_, i) => ({
      point: `agreed point ${i + 1}`,
      reason: 'matches the schema',
    })),
    disagreements: Array.from({ length: disagreements }, (_, i) => ({
      point: `disputed point ${i + 1}`,
      reason: 'depends on whether reporting needs them',
    })),
    newInsights,
  };
}

export function synthesis(questions: string[] = []) {
  return {
    solutions: [
      {
        name: 'Delete in one statement',
        description: 'One DELETE; cascades remove the items.',
        effort: 'low',
        maintainability: 'simple',
        performance: 'one pass',
        pros: ['simple'],
        cons: ['no archive'],
        approachIds: ['A1'],
      },
      {
        name: 'Delete with a count first',
        description: 'Count, then delete.',
        effort: 'low',
        maintainability: 'simple',
        performance: 'two passes',
        pros: ['checked'],
        cons: ['slower'],
        approachIds: ['B1'],
      },
    ],
    clarificationQuestions: questions,
  };
}

export const PLAN = {
  title: 'Remove old cancelled orders',
  overview: 'Count, then delete cancelled orders before the cutoff.',
  rationale: 'Both analysts agreed; the SQL was verified against the database.',
  complexity: 'low',
  tasks: [
    {
      id: 't1',
      title: 'Count the cancelled orders',
      description: 'Know how many go.',
      scope: 'read',
      objects: ['orders'],
      sql: "SELECT count(*) FROM orders WHERE status = 'cancelled' AND created_at < '2024-03-01'",
      depends_on: [],
      execution_group: 1,
      verification: 'the count is shown',
    },
    {
      id: 't2',
      title: 'Delete them',
      description: 'One DELETE.',
      scope: 'write',
      objects: ['orders', 'order_items'],
      sql: CUTOFF_DELETE,
      depends_on: ['t1'],
      execution_group: 2,
      verification: "SELECT count(*) FROM orders WHERE status = 'cancelled' AND created_at < '2024-03-01' returns 0",
    },
  ],
  acceptanceCriteria: ['No cancelled order before the cutoff remains'],
  risks: [{ risk: 'items cascade', mitigation: 'the impact preview shows them before approval' }],
  prerequisites: ['a backup'],
};

/** Rules for one whole round on one server (its model answers every call of the round). */
export function roundOnOneServer(replies: {
  a: Reply;
  b: Reply;
  reviewOfA: Reply;
  reviewOfB: Reply;
  synthesis: Reply;
}): Rule[] {
  return [
    { match: isAnalysis('data/architecture'), reply: replies.a },
    { match: isAnalysis('implementation/SQL'), reply: replies.b },
    { match: isReviewOf('A'), reply: replies.reviewOfA },
    { match: isReviewOf('B'), reply: replies.reviewOfB },
    { match: isSynthesis, reply: replies.synthesis },
  ];
}

/** A round that converges, both analyses proposing GOOD_SQL and both reviews agreeing, all on one server. */
export const convergingRound = (): Rule[] =>
  roundOnOneServer({
    a: { json: analysis('Delete directly', GOOD_SQL) },
    b: { json: analysis('Count then delete', GOOD_SQL) },
    reviewOfA: { json: review(3, 0) },
    reviewOfB: { json: review(3, 0) },
    synthesis: { json: synthesis() },
  });
