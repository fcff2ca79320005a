// Webview first paint (SPEC: < 300 ms): the production webview bundles in headless Chromium, in a page
// like the one the host serves, with a plan review (or the empty first-minute state, or a 10,000-row
// result for the results view) pushed on 'ready';
// first-contentful-paint and "panel rendered" (the view in #app and the frame after it), from navigation start.
import * as esbuild from 'esbuild';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import type { ChatEntryView, JobListItem, JobView, PanelState, TableSummary, TodoView } from '../src/shared/protocol';
import { panelPage } from '../src/host/panelPage';
import type { ResultsHostMessage } from '../src/shared/resultsProtocol';
import { percentile, report } from './stats';

const RUNS = 20;
const WARM_UP = 2;
const RENDER_TIMEOUT_MS = 10_000;

interface Scenario {
  /** Names the page's file. */
  key: string;
  label: string;
  /** Which webview: the side panel (default) or the results view. */
  view?: 'panel' | 'results';
  /** What the host posts on 'ready': the panel's state, or (results) the whole message. */
  state: PanelState | ResultsHostMessage;
  /** Selectors the rendered panel must hold; the first one marks "rendered". */
  expect: string[];
}

interface Timing {
  fcp: number;
  rendered: number;
}

// ---- fixture: a database of 30 tables, 5 jobs, the newest at its second plan review ----------------

const AT = '2025-06-12T14:02:00.000Z';
const JOB_ID = 'job_3f9a1c07b2e4d5a6';

const TABLE_NAMES = ['customers', 'addresses', 'orders', 'order_items', 'products', 'categories', 'product_categories', 'suppliers', 'inventory', 'warehouses', 'shipments', 'shipment_items', 'payments', 'refunds', 'invoices', 'invoice_lines', 'coupons', 'coupon_redemptions', 'carts', 'cart_items', 'reviews', 'wishlists', 'employees', 'departments', 'sessions', 'events', 'tax_rates', 'currencies'];

function tables(): TableSummary[] {
  const plain = TABLE_NAMES.map((name, i): TableSummary => ({ schema: 'public', name, kind: 'table', rowEstimate: (i + 1) * 1_237, columnCount: 4 + (i % 9), comment: i % 4 === 0 ? `The shop's ${name.replace('_', ' ')}.` : null }));
  return [
    ...plain,
    { schema: 'audit', name: 'order_changes', kind: 'partitioned_table', rowEstimate: null, columnCount: 7, comment: 'Written by the orders audit trigger.' },
    { schema: 'public', name: 'monthly_revenue', kind: 'materialized_view', rowEstimate: 36, columnCount: 3, comment: null },
  ];
}

const JOBS: JobListItem[] = [
  { id: JOB_ID, title: 'Archive cancelled orders older than two years', status: 'pending_review', phase: 'strategic', reviewCycles: 2, updatedAt: AT, busy: false },
  { id: 'job_0b1c2d3e4f5a6b7c', title: 'Backfill missing invoice totals', status: 'completed', phase: 'tactical', reviewCycles: 1, updatedAt: '2025-06-11T09:40:00.000Z', busy: false },
  { id: 'job_1a2b3c4d5e6f7a8b', title: 'Merge duplicate customers by e-mail', status: 'frozen', phase: 'tactical', reviewCycles: 3, updatedAt: '2025-06-10T16:12:00.000Z', busy: false },
  { id: 'job_2c3d4e5f6a7b8c9d', title: 'Add an index for slow order lookups', status: 'failed', phase: 'tactical', reviewCycles: 1, updatedAt: '2025-06-09T11:05:00.000Z', busy: false },
  { id: 'job_4e5f6a7b8c9d0e1f', title: 'Normalize product category names', status: 'cancelled', phase: 'strategic', reviewCycles: 0, updatedAt: '2025-06-08T08:30:00.000Z', busy: false },
];

const PLAN_MD = `# Plan: archive cancelled orders older than two years

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

function workspaceMd(): string {
  const facts = Array.from({ length: 24 }, (_, i) => `- ${TABLE_NAMES[i % TABLE_NAMES.length] ?? 'orders'}: ${(i + 1) * 1_237} rows (estimate), checked at review ${1 + (i % 2)}.`);
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

function todos(): TodoView[] {
  return Array.from({ length: 8 }, (_, i): TodoView => ({
    id: `t${i + 1}`,
    title: `Archive batch ${i + 1} (ids ${i * 500 + 1}–${(i + 1) * 500})`,
    status: 'pending',
    sql: `UPDATE orders SET status = 'archived'\nWHERE status = 'cancelled' AND created_at < now() - interval '2 years'\n  AND id BETWEEN ${i * 500 + 1} AND ${(i + 1) * 500};`,
    sqlFile: `sql/t${i + 1}.sql`,
    dependsOn: i === 0 ? [] : [`t${i}`],
  }));
}

const PLAN_DIFF = `--- a/plan.md
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

const DRAFT = 'Split the archive into one batch per calendar month, oldest first, instead of fixed id ranges.';

const CHAT: ChatEntryView[] = [
  { kind: 'user', at: '2025-06-12T13:55:00.000Z', text: 'Why batches of 500 and not one statement?' },
  { kind: 'assistant', at: '2025-06-12T13:55:20.000Z', text: 'One statement would hold row locks on **3,100 orders** at once and fire the audit trigger 3,100 times in one transaction. Batches keep each write small and reviewable.', tools: [{ name: 'read_file', ok: true, summary: 'read plan.md' }, { name: 'count_rows', ok: true, summary: "counted orders where status = 'cancelled'" }] },
  { kind: 'user', at: '2025-06-12T13:58:00.000Z', text: 'Help me ask for monthly batches instead.' },
  { kind: 'draft_feedback', at: '2025-06-12T13:58:15.000Z', text: DRAFT },
];

function reviewJob(): JobView {
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
    stop: { kind: 'review', cycle: 2, maxReviewCycles: 5, overLimit: false, ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa', planHash: 'a'.repeat(64) },
    busy: null,
    workspaceMd: workspaceMd(),
    planMd: PLAN_MD,
    todos: { ok: true, items, counts: { done: 0, skipped: 0, failed: 0, inProgress: 0, total: items.length } },
    planChange: { fromCycle: 1, toCycle: 2, diff: PLAN_DIFF },
    approval: null,
    chat: { entries: CHAT, pending: null, draftFeedback: DRAFT, openPlanEdit: null, error: null },
    usage: { calls: 9, inputTokens: 48_210, outputTokens: 3_975, costUsd: 0.0184 },
    history: ['review 2: plan ready', 'request changes: batches', 'review 1: plan ready', 'write todos.yaml', 'write plan.md', 'create job'].map((message, i) => ({ oid: (0xa3f91c0 + i * 0x1111).toString(16), message, at: new Date(Date.parse(AT) - i * 600_000).toISOString() })),
    files: ['job.json', 'task.md', 'workspace.md', 'plan.md', 'todos.yaml', 'chat.jsonl', 'reviews/1/plan.md', 'reviews/1/feedback.md', 'reviews/2/plan.md', ...items.slice(0, 6).map((t) => t.sqlFile ?? '')],
    reviewWarning: null,
    error: null,
  };
}

const PLAN_REVIEW: Scenario = {
  key: 'review',
  label: 'plan review (30 tables, 5 jobs)',
  state: {
    connection: { status: 'connected', label: 'shop (localhost)', kind: 'server', database: 'shop' },
    schema: { status: 'ready', tables: tables() },
    results: null,
    answer: null,
    approvals: [],
    hasProfiles: true,
    hasApiKey: true,
    jobs: JOBS,
    selectedJobId: JOB_ID,
    job: reviewJob(),
    jobError: null,
  },
  expect: ['[data-testid="job-state"][data-stop="review"]', '[data-testid="plan-md"] table', '[data-testid="plan-diff-toggle"]', '[data-testid="workspace-md"]', '[data-testid="table-item"]'],
};

const FIRST_MINUTE: Scenario = {
  key: 'empty',
  label: 'empty first-minute state',
  state: { connection: { status: 'none' }, schema: { status: 'idle' }, results: null, answer: null, approvals: [], hasProfiles: false, hasApiKey: false, jobs: [], selectedJobId: null, job: null, jobError: null },
  expect: ['.getting-started', '[data-testid="job-list"]', '[data-testid="connection-label"]'],
};

/** The results view with a 10,000-row result: the grid draws only the rows in view. */
const RESULTS: Scenario = {
  key: 'results',
  label: 'results view (10,000 rows × 6 columns)',
  view: 'results',
  state: {
    type: 'results',
    version: 1,
    tabs: [{ id: 'r1', title: 'orders: first 10,000 rows' }],
    active: 'r1',
    result: {
      sql: 'SELECT * FROM orders LIMIT 10000',
      fields: [{ name: 'id', type: 'bigint' }, { name: 'customer_id', type: 'bigint' }, { name: 'status', type: 'text' }, { name: 'total', type: 'numeric' }, { name: 'note', type: 'text' }, { name: 'created_at', type: 'timestamp with time zone' }],
      rows: Array.from({ length: 10_000 }, (_, i) => [i + 1, (i * 7) % 2000, ['paid', 'shipped', 'cancelled'][i % 3], ((i * 37) % 50000) / 100, i % 5 === 0 ? null : `note ${i}`, new Date(Date.parse(AT) - i * 60_000).toISOString()]),
      rowCount: 10_000,
      truncated: false,
      elapsedMs: 42,
    },
  },
  expect: ['[data-testid="result-row"]', '[data-testid="results-grid"]', '[data-testid="column-header"]'],
};

// ---- the page -------------------------------------------------------------------------------------

function bundleWebview(entry: string): string {
  const result = esbuild.buildSync({ entryPoints: [entry], bundle: true, platform: 'browser', format: 'iife', target: 'es2022', minify: true, write: false, logLevel: 'error' });
  const js = result.outputFiles[0]?.text ?? '';
  // Inlined, the bundle must not end (or re-open) its <script> element early.
  if (/<\/?script/i.test(js)) throw new Error('the webview bundle contains "<script" or "</script": it cannot be inlined');
  return js;
}

/**
 * Before the bundle: the VS Code API stand-in, which answers 'ready' with the state as the host does, and
 * the probe that resolves once the first expected selector is in #app and the next frame has been drawn.
 */
function hostScript(scenario: Scenario): string {
  const state = JSON.stringify(scenario.state).replace(/</g, '\\u003c');
  return `
const STATE = ${state};
window.acquireVsCodeApi = () => ({
  postMessage: (message) => { if (message.type === 'ready') window.postMessage(${scenario.view === 'results' ? 'STATE' : "{ type: 'state', version: 1, state: STATE }"}, '*'); },
  getState: () => undefined,
  setState: () => undefined,
});
const app = document.getElementById('app');
const rendered = new Promise((resolve) => {
  new MutationObserver((_records, observer) => {
    if (!app.querySelector(${JSON.stringify(scenario.expect[0])})) return;
    observer.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(performance.now());
      channel.port2.postMessage(null);
    });
  }).observe(app, { childList: true, subtree: true });
});
const firstContentfulPaint = new Promise((resolve) => {
  new PerformanceObserver((list, observer) => {
    const entry = list.getEntriesByName('first-contentful-paint')[0];
    if (!entry) return;
    observer.disconnect();
    resolve(entry.startTime);
  }).observe({ type: 'paint', buffered: true });
});
Promise.all([firstContentfulPaint, rendered]).then(([fcp, rendered]) => { window.benchTiming = { fcp, rendered }; });
`;
}

/** The panel's own page (src/host/panelPage.ts), self-contained: the CSS and both scripts inline. */
function pageHtml(css: string, bundle: string, scenario: Scenario): string {
  const nonce = 'YmVuY2gtd2Vidmlldy1ub25jZQ==';
  return panelPage({
    cspSource: "'self'",
    nonce,
    styles: `<style>${css}</style>`,
    scripts: `<script nonce="${nonce}">${hostScript(scenario)}</script>\n  <script nonce="${nonce}">${bundle}</script>`,
  });
}

// ---- measuring ------------------------------------------------------------------------------------

/** One fresh context and page: load, wait for the probe, check the panel drew what the state holds. */
async function loadOnce(browser: Browser, url: string, scenario: Scenario, consoleLines: Set<string>): Promise<Timing> {
  const context = await browser.newContext({ viewport: { width: 420, height: 900 } });
  try {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleLines.add(`${message.type()}: ${message.text()}`);
    });
    await page.goto(url);
    const timing = await page
      .waitForFunction(() => (window as unknown as { benchTiming: Timing }).benchTiming, undefined, { timeout: RENDER_TIMEOUT_MS })
      .then((handle) => handle.jsonValue())
      .catch(async (error: unknown) => {
        throw new Error(`${scenario.label}: the panel never showed ${scenario.expect[0]}; #app reads "${(await page.locator('#app').innerText()).replace(/\s+/g, ' ').slice(0, 300)}"; page errors: ${pageErrors.join(' | ') || 'none'}`, { cause: error });
      });
    if (pageErrors.length > 0) throw new Error(`${scenario.label}: the webview threw: ${pageErrors.join(' | ')}`);
    const missing = await page.evaluate((selectors) => selectors.filter((s) => document.querySelector(s) === null), scenario.expect);
    if (missing.length > 0) throw new Error(`${scenario.label}: the panel rendered without ${missing.join(', ')}`);
    return timing;
  } finally {
    await context.close();
  }
}

async function measure(browser: Browser, dir: string, css: string, bundle: string, scenario: Scenario, consoleLines: Set<string>): Promise<Timing[]> {
  const file = join(dir, `${scenario.key}.html`);
  writeFileSync(file, pageHtml(css, bundle, scenario));
  const timings: Timing[] = [];
  for (let i = 0; i < WARM_UP + RUNS; i++) {
    const timing = await loadOnce(browser, pathToFileURL(file).href, scenario, consoleLines);
    if (i >= WARM_UP) timings.push(timing);
  }
  return timings;
}

function reportTimings(scenario: Scenario, timings: Timing[]): void {
  const p = (values: number[]) => `${percentile(values, 50).toFixed(1)} / ${percentile(values, 95).toFixed(1)} ms`;
  report(`${scenario.label}: first-contentful-paint, p50 / p95 of ${RUNS} pages`, p(timings.map((t) => t.fcp)));
  report('  panel rendered (view in #app + next frame), p50 / p95', p(timings.map((t) => t.rendered)));
}

async function main(): Promise<void> {
  const bundle = bundleWebview('webview/main.ts');
  const css = readFileSync(join('media', 'panel.css'), 'utf8');
  const resultsBundle = bundleWebview('webview/results/main.ts');
  const resultsCss = readFileSync(join('media', 'results.css'), 'utf8');
  report('webview bundle (minified IIFE, es2022)', `${(Buffer.byteLength(bundle) / 1024).toFixed(1)} KB`);
  report('results view bundle', `${(Buffer.byteLength(resultsBundle) / 1024).toFixed(1)} KB`);
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-webview-bench-'));
  // The flags of the E2E harness's launchBrowser (test/e2e/harness/workbench.ts).
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  try {
    const consoleLines = new Set<string>();
    for (const scenario of [PLAN_REVIEW, FIRST_MINUTE]) reportTimings(scenario, await measure(browser, dir, css, bundle, scenario, consoleLines));
    reportTimings(RESULTS, await measure(browser, dir, resultsCss, resultsBundle, RESULTS, consoleLines));
    report('webview console errors / warnings', consoleLines.size === 0 ? 'none' : [...consoleLines].join(' | '));
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
