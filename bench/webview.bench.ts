// Webview first paint (SPEC: < 300 ms): the production webview bundles in headless Chromium, in a page
// like the one the host serves, with the side panel (the navigator; or the empty first-minute state) or a
// 10,000-row result for the results view pushed on 'ready'; first-contentful-paint and "rendered" (the
// view in #app and the frame after it), from navigation start. The job cockpit: bench/cockpit.bench.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PanelState } from '../src/shared/protocol';
import type { ResultsHostMessage } from '../src/shared/resultsProtocol';
import { report } from './stats';
import { AT, JOB_ID, JOBS, tables } from './webviewFixture';
import { bundleWebview, launchBenchBrowser, measurePaint, reportTimings } from './webviewPaint';

interface Scenario {
  key: string;
  label: string;
  view?: 'panel' | 'results';
  state: PanelState | ResultsHostMessage;
  expect: string[];
}

/** The side panel as a navigator: a job's plan and a teammate's write waiting, 5 jobs, 3 recent asks, 30 tables. */
const NAVIGATOR: Scenario = {
  key: 'navigator',
  label: 'navigator (2 waiting, 5 jobs, 3 asks, 30 tables)',
  state: {
    connection: { status: 'connected', label: 'shop (localhost)', kind: 'server', database: 'shop' },
    schema: { status: 'ready', tables: tables(), total: 30 },
    results: null,
    answer: null,
    approvals: [],
    hasProfiles: true,
    hasApiKey: true,
    jobs: JOBS,
    selectedJobId: JOB_ID,
    recentAsks: [
      'How many orders were placed last week?',
      'Which customers have no orders?',
      'Top 10 products by revenue',
    ].map((question, i) => ({
      threadId: `ask_${String(i).repeat(16)}`,
      question,
      status: 'answered' as const,
      at: AT,
    })),
    waiting: [
      {
        ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa',
        kind: 'plan',
        title: 'Archive cancelled orders older than two years',
        risk: 'LOW',
        createdBy: 'alice',
        createdAt: AT,
        jobId: JOB_ID,
        here: false,
      },
      {
        ticketId: 'tkt_bbbbbbbbbbbbbbbbbbbb',
        kind: 'write',
        title: "UPDATE products SET price = price * 1.1 WHERE category = 'tea'",
        risk: 'MEDIUM',
        createdBy: 'bob',
        createdAt: AT,
        jobId: null,
        here: false,
      },
    ],
  },
  expect: [
    '[data-testid="waiting-item"]',
    '[data-testid="job-item"]',
    '[data-testid="recent-ask"]',
    '[data-testid="table-item"]',
  ],
};

const FIRST_MINUTE: Scenario = {
  key: 'empty',
  label: 'empty first-minute state',
  state: {
    connection: { status: 'none' },
    schema: { status: 'idle' },
    results: null,
    answer: null,
    approvals: [],
    hasProfiles: false,
    hasApiKey: false,
    jobs: [],
    selectedJobId: null,
    recentAsks: [],
    waiting: [],
  },
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
      fields: [
        { name: 'id', type: 'bigint' },
        { name: 'customer_id', type: 'bigint' },
        { name: 'status', type: 'text' },
        { name: 'total', type: 'numeric' },
        { name: 'note', type: 'text' },
        { name: 'created_at', type: 'timestamp with time zone' },
      ],
      rows: Array.from({ length: 10_000 }, (_, i) => [
        i + 1,
        (i * 7) % 2000,
        ['paid', 'shipped', 'cancelled'][i % 3],
        ((i * 37) % 50000) / 100,
        i % 5 === 0 ? null : `note ${i}`,
        new Date(Date.parse(AT) - i * 60_000).toISOString(),
      ]),
      rowCount: 10_000,
      truncated: false,
      elapsedMs: 42,
    },
  },
  expect: ['[data-testid="result-row"]', '[data-testid="results-grid"]', '[data-testid="column-header"]'],
};

async function main(): Promise<void> {
  const bundle = bundleWebview('webview/panel/main.ts');
  const css = readFileSync(join('media', 'panel.css'), 'utf8');
  const resultsBundle = bundleWebview('webview/results/main.ts');
  const resultsCss = readFileSync(join('media', 'results.css'), 'utf8');
  report('webview bundle (minified IIFE, es2022)', `${(Buffer.byteLength(bundle) / 1024).toFixed(1)} KB`);
  report('results view bundle', `${(Buffer.byteLength(resultsBundle) / 1024).toFixed(1)} KB`);
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-webview-bench-'));
  const browser = await launchBenchBrowser();
  try {
    const consoleLines = new Set<string>();
    for (const scenario of [NAVIGATOR, FIRST_MINUTE, RESULTS]) {
      const results = scenario.view === 'results';
      const timings = await measurePaint(
        browser,
        dir,
        {
          key: scenario.key,
          label: scenario.label,
          message: results ? scenario.state : { type: 'state', version: 1, state: scenario.state },
          expect: scenario.expect,
          css: results ? resultsCss : css,
          bundle: [{ name: `${scenario.key}.js`, js: results ? resultsBundle : bundle }],
        },
        consoleLines,
      );
      reportTimings(scenario.label, timings);
    }
    report('webview console errors / warnings', consoleLines.size === 0 ? 'none' : [...consoleLines].join(' | '));
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
