// One runner for everything: unit and integration tests run in parallel files; the E2E project drives a
// real VS Code (code-server + Chromium) and runs alone, one file after another, once they are done.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // vitest's default is cores - 1 files at once: one on a 2-core machine. Integration files mostly wait on
    // PostgreSQL, Redis and the processes they start, so one file per core keeps the cores busy; more than
    // that starves the processes the tests start (product time limits such as a preview's then fail: seen
    // with four on two loaded cores). Every such file names what it creates uniquely (scratch databases,
    // roles, kernel-given ports, Redis prefixes) and reads pg_stat_activity of its own database only.
    maxWorkers: availableParallelism(),
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // Tests that start several processes (guards, the CLI, psql) took over 60 s on a loaded machine.
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/harness/globalSetup.ts'],
          testTimeout: 180_000,
          hookTimeout: 900_000,
          // A browser driving a real VS Code has timing flakes of its own (a palette that loses the keyboard
          // to a redraw, a webview that loads late): under CI a failed E2E test gets one more try, reported
          // as retried; a product bug fails both. Locally there is no retry, so flakes stay in sight.
          retry: process.env.CI === 'true' ? 1 : 0,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
