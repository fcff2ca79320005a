// One process at a time on a workspace's sample database, with real processes: PGlite has no lock of its
// own between processes, and two on one folder lose each other's writes. A second opener (here `pg-agent`
// in a terminal while "VS Code" holds it) is told who holds it and loses nothing; a holder killed with
// SIGKILL is taken over at once; in one process, a second open waits for the first to close.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import { openDatabase } from '../../../../src/core/db/openDatabase';
import { SAMPLE_ROW_COUNTS } from '../../../../src/core/db/sample/sampleData';
import { sampleDbLockFile } from '../../../../src/core/db/sample/sampleDbHold';
import { AgentError } from '../../../../src/core/platform/errors';
import type { Logger } from '../../../../src/core/platform/logger';
import { recordingLogger } from '../../../support/recordingLogger';

const SLOW = { timeout: 120_000 };
const CLI = path.join(process.cwd(), 'dist', 'cli.js');

function pgAgent(workspace: string, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...argv, '--workspace', workspace],
      { cwd: workspace, env: { ...process.env, REDIS_URL: '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the sample database, held by one process at a time', () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-sample-hold-'));
  const dataDir = path.join(workspace, '.pgagent', 'sample-db');
  const lockFile = sampleDbLockFile(dataDir);
  const open = (logger: Logger, waitMs?: number): Promise<Db> =>
    openDatabase(
      { kind: 'sample' },
      {
        sampleDbDir: dataDir,
        logger,
        sampleDbHeldBy: 'VS Code',
        ...(waitMs !== undefined ? { sampleDbWaitMs: waitMs } : {}),
      },
    );

  beforeAll(async () => {
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run package first (npm test does)`);
    // The first open restores the shipped image beside dist/cli.js; every later open finds it complete.
    const made = await pgAgent(workspace, ['sql', '--db', 'sample', '--json', '--', 'SELECT 1 AS one']);
    expect(made.code, made.stderr).toBe(0);
    expect(fs.existsSync(lockFile), 'the lock is released when the command ends').toBe(false);
  }, 120_000);

  afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));

  /** `pg-agent sql --db sample` reading the row the window writes, as its own process. */
  const readEmail = () =>
    pgAgent(workspace, ['sql', '--db', 'sample', '--json', '--', 'SELECT email FROM customers WHERE id = 1']);

  it("refuses pg-agent while a window holds it, naming the holder, and the window's writes stay", SLOW, async () => {
    const db = await open(recordingLogger());
    try {
      await db.query("UPDATE customers SET email = 'held@example.com' WHERE id = 1");
      const refused = await readEmail();
      expect(refused.code, refused.stderr).toBe(1);
      const error = (JSON.parse(refused.stdout) as { error: { code: string; message: string; advice: string } }).error;
      expect(error.code).toBe('SAMPLE_DB_FAILED');
      expect(error.message).toContain(`is open in VS Code (${os.hostname()}:${process.pid})`);
      expect(error.advice).toContain('Connect that window to another database');
      expect((await db.query<{ email: string }>('SELECT email FROM customers WHERE id = 1')).rows[0]?.email).toBe(
        'held@example.com',
      );
    } finally {
      await db.close();
    }
    expect(fs.existsSync(lockFile), 'released on close').toBe(false);
    const after = await readEmail();
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ rows: [['held@example.com']] });
  });

  it('takes over at once from a holder killed with SIGKILL, with the database whole', SLOW, async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'sql', '--db', 'sample', '--workspace', workspace, '--', 'SELECT pg_sleep(60)'],
      {
        cwd: workspace,
        env: { ...process.env, REDIS_URL: '' },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const heldByChild = () =>
      fs.existsSync(lockFile) && fs.readFileSync(lockFile, 'utf8').includes(`"pid":${child.pid}`);
    for (let waited = 0; !heldByChild(); waited += 50) {
      if (waited > 30_000 || child.exitCode !== null)
        throw new Error(`pg-agent never held the sample database (exit ${child.exitCode})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    expect(fs.existsSync(lockFile), 'a killed holder leaves its lock').toBe(true);

    const logger = recordingLogger();
    const db = await open(logger, 0);
    try {
      expect(logger.messages()).toContain('sample database: taking over from a process that is gone');
      expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n).toBe(
        SAMPLE_ROW_COUNTS.orders,
      );
    } finally {
      await db.close();
    }
  });

  it(
    'in one process, a second open waits for the first to close, and one that cannot wait is told why',
    SLOW,
    async () => {
      const first = await open(recordingLogger());
      const refused = await open(recordingLogger(), 300).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(AgentError);
      expect(refused).toMatchObject({ code: 'SAMPLE_DB_FAILED' });
      expect((refused as AgentError).message).toContain('is open in VS Code');
      const logger = recordingLogger();
      const second = open(logger, 60_000);
      // The second is waiting (it logs so once) before the first closes.
      for (
        let waited = 0;
        !logger.messages().includes('sample database: waiting for another process to close it');
        waited += 20
      ) {
        if (waited > 10_000) throw new Error('the second open never waited');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await first.close();
      const db = await second;
      try {
        expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM customers')).rows[0]?.n).toBe(
          SAMPLE_ROW_COUNTS.customers,
        );
      } finally {
        await db.close();
      }
      expect(fs.existsSync(lockFile)).toBe(false);
    },
  );
});
