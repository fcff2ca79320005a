/**
 * The webview benches' fixture: a database of 30 tables, 5 jobs, the newest at its second plan review
 * (plan with a table and a diff, 8 todos, a review chat with a drafted feedback).
 */
import type { ChatEntryView, JobListItem, JobView, TableSummary, TodoView } from '../src/shared/protocol';

export const AT = '2025-06-12T14:02:00.000Z';
export const JOB_ID = 'job_3f9a1c07b2e4d5a6';

export const TABLE_NAMES = [
  'customers',
  'addresses',
  'orders',
  'order_items',
  'products',
  'categories',
  'product_categories',
  'suppliers',
  'inventory',
  'warehouses',
  'shipments',
  'shipment_items',
  'payments',
  'refunds',
  'invoices',
  'invoice_lines',
  'coupons',
  'coupon_redemptions',
  'carts',
  'cart_items',
  'reviews',
  'wishlists',
  'employees',
  'departments',
  'sessions',
  'events',
  'tax_rates',
  'currencies',
];

export function tables(): TableSummary[] {
  const plain = TABLE_NAMES.map((name, i): TableSummary => ({
    schema: 'public',
    name,
    kind: 'table',
    rowEstimate: (i + 1) * 1_237,
    columnCount: 4 + (i % 9),
    comment: i % 4 === 0 ? `The shop's ${name.replace('_', ' ')}.` : null,
  }));
  return [
    ...plain,
    {
      schema: 'audit',
      name: 'order_changes',
      kind: 'partitioned_table',
      rowEstimate: null,
      columnCount: 7,
      comment: 'Written by the orders audit trigger.',
    },
    {
      schema: 'public',
      name: 'monthly_revenue',
      kind: 'materialized_view',
      rowEstimate: 36,
      columnCount: 3,
      comment: null,
    },
  ];
}

export const JOBS: JobListItem[] = [
  {
    id: JOB_ID,
    title: 'Archive cancelled orders older than two years',
    status: 'pending_review',
    phase: 'strategic',
    reviewCycles: 2,
    updatedAt: AT,
    busy: false,
    state: 'waiting for review',
  },
  {
    id: 'job_0b1c2d3e4f5a6b7c',
    title: 'Backfill missing invoice totals',
    status: 'completed',
    phase: 'tactical',
    reviewCycles: 1,
    updatedAt: '2025-06-11T09:40:00.000Z',
    busy: false,
    state: 'completed',
  },
  {
    id: 'job_1a2b3c4d5e6f7a8b',
    title: 'Merge duplicate customers by e-mail',
    status: 'frozen',
    phase: 'tactical',
    reviewCycles: 3,
    updatedAt: '2025-06-10T16:12:00.000Z',
    busy: false,
    state: 'paused',
  },
  {
    id: 'job_2c3d4e5f6a7b8c9d',
    title: 'Add an index for slow order lookups',
    status: 'failed',
    phase: 'tactical',
    reviewCycles: 1,
    updatedAt: '2025-06-09T11:05:00.000Z',
    busy: false,
    state: 'failed',
  },
  {
    id: 'job_4e5f6a7b8c9d0e1f',
    title: 'Normalize product category names',
    status: 'cancelled',
    phase: 'strategic',
    reviewCycles: 0,
    updatedAt: '2025-06-08T08:30:00.000Z',
    busy: false,
    state: 'cancelled',
  },
];

export const PLAN_MD = `# Plan: archive cancelled orders older than two years

## Steps

1. Count the cancelled orders per month before 2023-06 (\`orders.status = 'cancelled'\`).
2. Archive them in **batches of 500 ids**, oldest first; each batch is one approved write.
3. After each batch, check that \`order_items\` rows followed (ON DELETE CASCADE is not involved: rows stay).

\`\`\`sql
UPDATE orders SET status = 'archived'
WHERE status = 'cancelled' AND created_at < now() - interval '2 years' AND id BETWEEN $1 AND $2;
\`\`\`

| Batch | Ids | Orders |
|-------|-----|-------:|
| 1 | 1–500 | 412 |
| 2 | 501–1000 | 388 |
`;

export function workspaceMd(): string {
  const facts = Array.from(
    { length: 24 },
    (_, i) =>
      `- ${TABLE_NAMES[i % TABLE_NAMES.length] ?? 'orders'}: ${(i + 1) * 1_237} rows (estimate), checked at review ${1 + (i % 2)}.`,
  );
  return [
    '# Archive cancelled orders',
    '',
    '## Task',
    '',
    'Archive cancelled orders older than two years without touching their items, payments or invoices.',
    '',
    '## Facts',
    '',
    ...facts,
    '',
    '## Risks',
    '',
    '- `audit.order_changes` gets one row per updated order (trigger `orders_audit`).',
    '- Refunds reference orders; archiving keeps the rows, so no foreign key is affected.',
    '',
    '## Open questions',
    '',
    '- Should archived orders stay visible in the monthly revenue view?',
  ].join('\n');
}

export function todos(): TodoView[] {
  return Array.from({ length: 8 }, (_, i): TodoView => ({
    id: `t${i + 1}`,
    title: `Archive batch ${i + 1} (ids ${i * 500 + 1}–${(i + 1) * 500})`,
    status: 'pending',
    sql: `UPDATE orders SET status = 'archived'\nWHERE status = 'cancelled' AND created_at < now() - interval '2 years'\n  AND id BETWEEN ${i * 500 + 1} AND ${(i + 1) * 500};`,
    sqlFile: `sql/t${i + 1}.sql`,
    dependsOn: i === 0 ? [] : [`t${i}`],
  }));
}

export const PLAN_DIFF = `--- a/plan.md
+++ b/plan.md
@@ -1,9 +1,12 @@
 # Plan: archive cancelled orders older than two years
 
 ## Steps
 
-1. Archive all cancelled orders before 2023-06 in one statement.
-2. Check the count afterwards.
+1. Count the cancelled orders per month before 2023-06 (\`orders.status = 'cancelled'\`).
+2. Archive them in **batches of 500 ids**, oldest first; each batch is one approved write.
+3. After each batch, check that \`order_items\` rows followed (ON DELETE CASCADE is not involved: rows stay).
 
 \`\`\`sql
 UPDATE orders SET status = 'archived'
-WHERE status = 'cancelled' AND created_at < now() - interval '2 years';
+WHERE status = 'cancelled' AND created_at < now() - interval '2 years' AND id BETWEEN $1 AND $2;
 \`\`\`
+
+| Batch | Ids | Orders |
+|-------|-----|-------:|
`;

export const DRAFT = 'Split the archive into one batch per calendar month, oldest first, instead of fixed id ranges.';

export const CHAT: ChatEntryView[] = [
  { kind: 'user', at: '2025-06-12T13:55:00.000Z', text: 'Why batches of 500 and not one statement?' },
  {
    kind: 'assistant',
    at: '2025-06-12T13:55:20.000Z',
    text: 'One statement would hold row locks on **3,100 orders** at once and fire the audit trigger 3,100 times in one transaction. Batches keep each write small and reviewable.',
    tools: [
      { name: 'read_file', ok: true, summary: 'read plan.md' },
      { name: 'count_rows', ok: true, summary: "counted orders where status = 'cancelled'" },
    ],
  },
  { kind: 'user', at: '2025-06-12T13:58:00.000Z', text: 'Help me ask for monthly batches instead.' },
  { kind: 'draft_feedback', at: '2025-06-12T13:58:15.000Z', text: DRAFT },
];

export function reviewJob(): JobView {
  const items = todos();
  return {
    id: JOB_ID,
    title: 'Archive cancelled orders older than two years',
    status: 'pending_review',
    phase: 'strategic',
    reviewCycles: 2,
    createdAt: '2025-06-12T13:20:00.000Z',
    updatedAt: AT,
    connection: 'postgres://app@localhost:5432/shop',
    stop: {
      kind: 'review',
      cycle: 2,
      maxReviewCycles: 5,
      overLimit: false,
      ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa',
      planHash: 'a'.repeat(64),
    },
    busy: null,
    workspaceMd: workspaceMd(),
    planMd: PLAN_MD,
    todos: { ok: true, items, counts: { done: 0, skipped: 0, failed: 0, inProgress: 0, total: items.length } },
    planChange: { fromCycle: 1, toCycle: 2, diff: PLAN_DIFF },
    approval: null,
    chat: { entries: CHAT, pending: null, draftFeedback: DRAFT, openPlanEdit: null, error: null },
    usage: { calls: 9, inputTokens: 48_210, outputTokens: 3_975, costUsd: 0.0184 },
    history: [
      'review 2: plan ready',
      'request changes: batches',
      'review 1: plan ready',
      'write todos.yaml',
      'write plan.md',
      'create job',
    ].map((message, i) => ({
      oid: (0xa3f91c0 + i * 0x1111).toString(16),
      message,
      at: new Date(Date.parse(AT) - i * 600_000).toISOString(),
    })),
    files: [
      'job.json',
      'task.md',
      'workspace.md',
      'plan.md',
      'todos.yaml',
      'chat.jsonl',
      'reviews/1/plan.md',
      'reviews/1/feedback.md',
      'reviews/2/plan.md',
      ...items.slice(0, 6).map((t) => t.sqlFile ?? ''),
    ],
    reviewWarning: null,
    error: null,
  };
}
