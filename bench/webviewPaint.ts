/**
 * Webview first paint, shared by the webview benches: a production bundle in headless Chromium, in the
 * page the host serves (src/host/ui/panelPage.ts, its CSP), with the host's message posted on 'ready';
 * first-contentful-paint and "rendered" (the first expected selector in #app and the frame after it),
 * from navigation start.
 */
import * as esbuild from 'esbuild';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { panelPage } from '../src/host/ui/panelPage';
import { percentile, report } from './stats';

export const RUNS = 20;
const WARM_UP = 2;
const RENDER_TIMEOUT_MS = 10_000;

export interface PaintScenario {
  /** Names the page's file. */
  key: string;
  label: string;
  /** What the host posts on 'ready'. */
  message: unknown;
  /** Selectors the rendered view must hold; the first one marks "rendered". */
  expect: string[];
  css: string;
  /** The bundle's files: the first is the page's script; others are chunks it may load itself. */
  bundle: { name: string; js: string }[];
  /** Scripts as files beside the page (as a webview loads them) rather than inline. */
  external?: boolean;
  viewport?: { width: number; height: number };
}

export interface Timing {
  fcp: number;
  rendered: number;
  /** Every expected selector on the page (what lazily loaded chunks draw included) and the frame after. */
  complete: number;
}

export function bundleWebview(entry: string): string {
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'error',
  });
  const js = result.outputFiles[0]?.text ?? '';
  // Inlined, the bundle must not end (or re-open) its <script> element early.
  if (/<\/?script/i.test(js))
    throw new Error('the webview bundle contains "<script" or "</script": it cannot be inlined');
  return js;
}

/** Headless Chromium with the flags of the E2E harness's launchBrowser (test/e2e/harness/workbench.ts). */
export function launchBenchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * Before the bundle: the VS Code API stand-in, which answers 'ready' with the message as the host does, and
 * the probe that resolves once the first expected selector is in #app and the next frame has been drawn.
 */
function hostScript(scenario: PaintScenario): string {
  const message = JSON.stringify(scenario.message).replace(/</g, '\\u003c');
  return `
const MESSAGE = ${message};
window.acquireVsCodeApi = () => ({
  postMessage: (message) => { if (message.type === 'ready') window.postMessage(MESSAGE, '*'); },
  getState: () => undefined,
  setState: () => undefined,
});
const app = document.getElementById('app');
const drawn = (selectors) => new Promise((resolve) => {
  new MutationObserver((_records, observer) => {
    if (!selectors.every((s) => app.querySelector(s))) return;
    observer.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(performance.now());
      channel.port2.postMessage(null);
    });
  }).observe(app, { childList: true, subtree: true, attributes: true });
});
const rendered = drawn(${JSON.stringify(scenario.expect.slice(0, 1))});
const complete = drawn(${JSON.stringify(scenario.expect)});
const firstContentfulPaint = new Promise((resolve) => {
  new PerformanceObserver((list, observer) => {
    const entry = list.getEntriesByName('first-contentful-paint')[0];
    if (!entry) return;
    observer.disconnect();
    resolve(entry.startTime);
  }).observe({ type: 'paint', buffered: true });
});
Promise.all([firstContentfulPaint, rendered, complete]).then(([fcp, rendered, complete]) => { window.benchTiming = { fcp, rendered, complete }; });
`;
}

/** The host's own page, self-contained: the CSS inline, the host stand-in and the bundle inline or beside it. */
function pageHtml(dir: string, scenario: PaintScenario): string {
  const nonce = 'YmVuY2gtd2Vidmlldy1ub25jZQ==';
  const [main, ...chunks] = scenario.bundle;
  if (!main) throw new Error(`${scenario.label}: no bundle`);
  let script: string;
  if (scenario.external === true) {
    for (const file of [main, ...chunks]) writeFileSync(join(dir, file.name), file.js);
    script = `<script nonce="${nonce}" src="${main.name}"></script>`;
  } else {
    script = `<script nonce="${nonce}">${main.js}</script>`;
  }
  return panelPage({
    cspSource: "'self'",
    nonce,
    styles: `<style nonce="${nonce}">${scenario.css}</style>`,
    scripts: `<script nonce="${nonce}">${hostScript(scenario)}</script>\n  ${script}`,
  });
}

/** One fresh context and page: load, wait for the probe, check the view drew what the message holds. */
async function loadOnce(
  browser: Browser,
  url: string,
  scenario: PaintScenario,
  consoleLines: Set<string>,
): Promise<Timing> {
  const context = await browser.newContext({ viewport: scenario.viewport ?? { width: 420, height: 900 } });
  try {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        consoleLines.add(`${message.type()}: ${message.text()}`);
    });
    await page.goto(url);
    const timing = await page
      .waitForFunction(() => (window as unknown as { benchTiming: Timing }).benchTiming, undefined, {
        timeout: RENDER_TIMEOUT_MS,
      })
      .then((handle) => handle.jsonValue())
      .catch(async (error: unknown) => {
        const missing = await page.evaluate(
          (selectors) => selectors.filter((s) => document.querySelector(s) === null),
          scenario.expect,
        );
        throw new Error(
          `${scenario.label}: the view never showed ${missing.join(', ')}; #app reads "${(await page.locator('#app').innerText()).replace(/\s+/g, ' ').slice(0, 300)}"; page errors: ${pageErrors.join(' | ') || 'none'}`,
          { cause: error },
        );
      });
    if (pageErrors.length > 0) throw new Error(`${scenario.label}: the webview threw: ${pageErrors.join(' | ')}`);
    return timing;
  } finally {
    await context.close();
  }
}

export async function measurePaint(
  browser: Browser,
  dir: string,
  scenario: PaintScenario,
  consoleLines: Set<string>,
): Promise<Timing[]> {
  const file = join(dir, `${scenario.key}.html`);
  writeFileSync(file, pageHtml(dir, scenario));
  const timings: Timing[] = [];
  for (let i = 0; i < WARM_UP + RUNS; i++) {
    const timing = await loadOnce(browser, pathToFileURL(file).href, scenario, consoleLines);
    if (i >= WARM_UP) timings.push(timing);
  }
  return timings;
}

export function reportTimings(label: string, timings: Timing[]): void {
  const p = (values: number[]) => `${percentile(values, 50).toFixed(1)} / ${percentile(values, 95).toFixed(1)} ms`;
  report(`${label}: first-contentful-paint, p50 / p95 of ${RUNS} pages`, p(timings.map((t) => t.fcp)));
  report('  view rendered (view in #app + next frame), p50 / p95', p(timings.map((t) => t.rendered)));
  report('  complete (every expected part drawn), p50 / p95', p(timings.map((t) => t.complete)));
}
