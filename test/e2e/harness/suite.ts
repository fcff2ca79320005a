// One E2E suite's life: a fresh workspace folder (optionally with connection profiles of server databases),
// code-server (optionally pointed at the scripted Gemini server), Chromium on the workbench; a screenshot of the page when a test fails; everything torn down
// afterwards even when one part of it fails. Registers vitest's hooks: call it inside or above `describe`.
//
// Why each suite starts its own code-server and Chromium rather than sharing one: what a suite's start costs
// is mostly the window itself (each suite logs it: "[e2e] <suite> started: ..."; under load, code-server was
// healthy after ~3 s of a ~30 s start, the rest being the workbench loading and the extension activating),
// and a shared code-server would still open a new window and extension host per suite. What it would
// share is what suites differ in: one user settings file and one environment for every extension host
// (the scripted model's URL and key, settings such as postgresAgent.redisUrl), so a suite would inherit
// the one before it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { startScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../support/services';
import { startCodeServer } from './codeServer';
import type { CodeServer, CodeServerOptions } from './codeServer';
import {
  ACTIVITY_ITEM,
  artifactsDir,
  launchBrowser,
  openWorkbench,
  resetArtifacts,
  screenshot,
  seenNotifications,
} from './workbench';

export interface SuiteOptions {
  /** Starts the scripted model server and points the extension's Gemini client at it. */
  withModel?: boolean;
  /** VS Code settings of the workspace. */
  settings?: CodeServerOptions['settings'];
  /**
   * The workspace's connection profiles (.pgagent/config.json), by profile name: server databases made in a
   * `beforeAll` registered before the suite (asked for when the workspace is made). Written before `prepare`.
   */
  connections?(): Record<string, ScratchDatabase>;
  /** Runs on the new workspace folder before VS Code opens it. */
  prepare?(workspace: string): void;
  /** Waits for the extension's activity-bar item (its contributions are there then); default true. */
  waitForExtension?: boolean;
}

export interface WorkbenchSuite {
  page(): Page;
  workspace(): string;
  model(): ScriptedModelServer;
  /** Adds the notifications VS Code showed to a failure of `check`, since they usually say why. */
  explained(check: () => Promise<void>): Promise<void>;
  /** Error notifications shown after the first `from` notifications. */
  errorsSince(from: number): Promise<string[]>;
}

export function workbenchSuite(suite: string, options: SuiteOptions = {}): WorkbenchSuite {
  let workspace: string | undefined;
  let model: ScriptedModelServer | undefined;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;

  const the = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not there (see beforeAll)`);
    return value;
  };

  beforeAll(async () => {
    const begun = Date.now();
    const marks: string[] = [];
    const mark = (what: string): void => {
      marks.push(`${what} ${((Date.now() - begun) / 1000).toFixed(1)} s`);
    };
    resetArtifacts(suite);
    workspace = mkdtempSync(join(tmpdir(), `pgagent-e2e-${suite}-`));
    if (options.connections) writeConnectionProfiles(workspace, options.connections());
    options.prepare?.(workspace);
    if (options.withModel === true) model = await startScriptedModelServer();
    server = await startCodeServer({
      workspace,
      settings: options.settings,
      installed: inject('e2eInstalledExtensions'),
      env: model ? { PGAGENT_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: 'test-key' } : undefined,
      keepLogsIn: join(artifactsDir(suite), 'logs'),
    });
    mark('code-server healthy');
    browser = await launchBrowser();
    mark('Chromium launched');
    page = await openWorkbench(browser, server.url, workspace);
    mark('workbench shown');
    if (options.waitForExtension !== false) {
      await page.locator(ACTIVITY_ITEM).first().waitFor({ state: 'visible', timeout: 60_000 });
      mark('extension there');
    }
    // What a suite's start costs, in the log: the part of the E2E time no test of it controls.
    process.stderr.write(`[e2e] ${suite} started: ${marks.join(', ')}\n`);
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async ({ task }) => {
      // An `it.fails` test fails on purpose: no screenshot for it.
      if (page !== undefined && task.fails !== true)
        await screenshot(page, `FAILED-${task.name}`, suite).catch(() => undefined);
    });
  });

  afterAll(async () => {
    const steps = [() => browser?.close(), () => server?.stop(), () => model?.close()];
    const failures: unknown[] = [];
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
    if (failures.length > 0) throw new AggregateError(failures, `Tearing down the ${suite} suite failed`);
  });

  return {
    page: () => the(page, 'The workbench'),
    workspace: () => the(workspace, 'The workspace folder'),
    model: () => the(model, 'The scripted model server'),
    async explained(check) {
      try {
        await check();
      } catch (error) {
        const notifications = page === undefined ? [] : await seenNotifications(page).catch(() => []);
        if (error instanceof Error && notifications.length > 0) {
          const lines = notifications.map(({ severity, text }) => `  [${severity}] ${text}`).join('\n');
          error.message += `\nNotifications shown so far:\n${lines}`;
        }
        throw error;
      }
    },
    async errorsSince(from) {
      return (await seenNotifications(the(page, 'The workbench')))
        .slice(from)
        .filter(({ severity }) => severity === 'error')
        .map(({ text }) => text);
    },
  };
}

/** Writes `.pgagent/config.json` naming each database as a connection profile (host, port, database, user of its URL). */
function writeConnectionProfiles(workspace: string, databases: Record<string, ScratchDatabase>): void {
  const connections = Object.entries(databases).map(([name, db]) => {
    const url = new URL(db.url);
    return {
      name,
      host: url.hostname,
      port: Number(url.port || 5432),
      database: db.name,
      user: decodeURIComponent(url.username),
    };
  });
  mkdirSync(join(workspace, '.pgagent'), { recursive: true });
  writeFileSync(join(workspace, '.pgagent', 'config.json'), JSON.stringify({ connections }));
}
