// One runner for everything: unit and integration tests run in parallel files; the E2E project drives a
// real VS Code (code-server + Chromium) and runs alone because it is heavy.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
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
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
