// One runner for everything, in two lanes that run at the same time:
// - unit and integration files in forks, one file per core at a time;
// - the E2E project (a real VS Code: code-server + Chromium per suite) in ONE worker thread, one suite after
//   another. A different pool is what makes it a lane of its own: vitest runs its pools at once, while in
//   the forks pool a singleFork project only starts once every other file of that pool is done (that was
//   unit + integration, then E2E: their times added up, ~1,600 s of `npm test`).
// Why these two overlap without sharing state: every integration file and every E2E suite names what it
// creates uniquely (scratch databases, Redis prefixes, kernel-given ports, temporary folders), and an E2E suite
// spends most of its time waiting on the window it drives. Why E2E stays one suite at a time: with the two
// integration files beside it that is three busy lanes on a two-core machine already; a second VS Code window
// would make four, the count at which product time limits were seen to fail (see maxWorkers).
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
          testTimeout: 60_000,
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
          // The E2E lane (see the top): a thread of the runner's process, which only drives other processes
          // (code-server, Chromium, pg-agent), one suite after another.
          pool: 'threads',
          poolOptions: { threads: { singleThread: true } },
        },
      },
    ],
  },
});
