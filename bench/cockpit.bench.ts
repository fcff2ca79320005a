// Job cockpit first paint (SPEC: < 300 ms p95): the production cockpit bundle (and the chunks it loads
// itself) in headless Chromium, as files beside the host's page like a webview loads them, with a job at
// its second plan review pushed on 'ready' (plan with a table and a diff, 8 todos, a review chat with a
// drafted feedback, 9 steps of activity). "rendered": the job's state and its action bar on screen;
// "complete": the plan's markdown, the chat's replies and the activity chart drawn too.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import type { CockpitHostMessage, TimelineStepView } from '../src/shared/cockpitProtocol';
import { report } from './stats';
import { AT, JOB_ID, reviewJob } from './webviewFixture';
import { launchBenchBrowser, measurePaint, reportTimings } from './webviewPaint';

function step(
  phase: TimelineStepView['phase'],
  iteration: number,
  minutesAgo: number,
  calls: number,
  tokens: number,
): TimelineStepView {
  const at = (m: number) => new Date(Date.parse(AT) - m * 60_000).toISOString();
  return {
    kind: phase === 'review' ? 'chat' : 'phase',
    phase,
    iteration,
    startedAt: at(minutesAgo),
    endedAt: at(minutesAgo - 2),
    calls,
    inputTokens: tokens,
    outputTokens: Math.round(tokens / 12),
    costUsd: tokens * 3.5e-7,
    modelMs: calls * 1_800,
    summary: null,
  };
}

const MESSAGE: CockpitHostMessage = {
  type: 'cockpit',
  version: 1,
  state: {
    jobId: JOB_ID,
    job: reviewJob(),
    timeline: {
      steps: [
        step('strategic', 1, 40, 3, 14_200),
        step('review', 1, 30, 2, 6_100),
        step('strategic', 2, 20, 3, 21_400),
        step('review', 2, 5, 1, 6_510),
      ],
      marks: [
        { at: AT, text: 'plan ready for review (cycle 1)', after: 0 },
        { at: AT, text: 'Review 1: changes requested by alice', after: 1 },
        { at: AT, text: 'plan ready for review (cycle 2)', after: 2 },
      ],
    },
    writes: [],
    error: null,
  },
};

/** The cockpit as the extension's build makes it (esbuild.mjs): an IIFE and the chunks it loads on its own. */
function cockpitBundle(): { name: string; js: string }[] {
  const result = esbuild.buildSync({
    entryPoints: { cockpit: 'webview/cockpit/main.ts', cockpitMarkdown: 'webview/cockpit/markdownChunk.ts' },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: 'out',
    logLevel: 'error',
  });
  return result.outputFiles
    .map((file) => ({ name: file.path.split(/[\\/]/).pop() ?? '', js: file.text }))
    .sort((a, b) => (a.name === 'cockpit.js' ? -1 : b.name === 'cockpit.js' ? 1 : 0));
}

async function main(): Promise<void> {
  const bundle = cockpitBundle();
  for (const file of bundle)
    report(`${file.name} (minified IIFE, es2022)`, `${(Buffer.byteLength(file.js) / 1024).toFixed(1)} KB`);
  const css = ['panel.css', 'cockpit.css'].map((f) => readFileSync(join('media', f), 'utf8')).join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-cockpit-bench-'));
  const browser = await launchBenchBrowser();
  try {
    const consoleLines = new Set<string>();
    const timings = await measurePaint(
      browser,
      dir,
      {
        key: 'cockpit',
        label: 'job cockpit at plan review 2 (1280×800)',
        message: MESSAGE,
        expect: [
          '[data-testid="job-state"][data-stop="review"]',
          '[data-testid="approve-plan-button"]',
          '[data-testid="plan-md"] table',
          '[data-testid="chat-reply"] .markdown',
          '[data-testid="timeline"] svg',
          '[data-testid="todo-item"]',
        ],
        css,
        bundle,
        external: true,
        viewport: { width: 1280, height: 800 },
      },
      consoleLines,
    );
    reportTimings('job cockpit at plan review 2 (1280×800)', timings);
    report('webview console errors / warnings', consoleLines.size === 0 ? 'none' : [...consoleLines].join(' | '));
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
