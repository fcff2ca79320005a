// Exactly once under crashes (SPEC §5.6), for real: `pg-agent exec --ticket` runs in a child process and is
// killed with SIGKILL while its transaction is held open by a trigger that sleeps (in this test's own
// database), before COMMIT and during COMMIT; then `pg-agent approvals show` must tell what really
// happened, and nothing may run twice. Both ticket stores: workspace files, and Redis under a random prefix.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { databaseResolver } from '../../../../src/core/sql/executionResolver';
import type { TicketStore } from '../../../../src/core/approvals/ticketStore';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { VOID_MARK, workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import { runPgAgent } from '../../../support/cliHarness';
import { call, inTactical, PLAN_V1, planTurn, tactical } from '../../../support/jobScript';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { REDIS_URL, redisAvailable } from '../../../support/services';
import { queryValue } from '../../../support/scratchDatabase';

const CLI = fileURLToPath(new URL('../../../../dist/cli.js', import.meta.url));
const WRITE = 'UPDATE accounts SET balance = balance + 1 WHERE id = 1';

// `control` says how long the triggers sleep (0: not at all), so the preview that makes the ticket runs fast.
const SCHEMA = `
CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL);
INSERT INTO accounts VALUES (1, 0);
CREATE TABLE control (statement_sleep float8 NOT NULL, commit_sleep float8 NOT NULL, commit_fails boolean NOT NULL);
INSERT INTO control VALUES (0, 0, false);
CREATE FUNCTION slow_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_sleep((SELECT statement_sleep FROM control));
  RETURN NEW;
END $$;
CREATE TRIGGER slow_statement BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION slow_statement();
CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_sleep((SELECT commit_sleep FROM control));
  IF (SELECT commit_fails FROM control) THEN RAISE EXCEPTION 'refused at commit'; END IF;
  RETURN NULL;
END $$;
-- Deferred: it runs inside COMMIT, so the executor is killed while its COMMIT is under way.
CREATE CONSTRAINT TRIGGER slow_commit AFTER UPDATE ON accounts DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION slow_commit();
`;

interface StoreSetup {
  name: string;
  enabled: boolean;
  env: () => Record<string, string>;
  open: (workspace: string) => Promise<TicketStore>;
}

const redisPrefix = `pgagent-test-${randomBytes(6).toString('hex')}:`;

const STORES: StoreSetup[] = [
  {
    name: 'workspace files',
    enabled: true,
    env: () => ({}),
    open: (workspace) => Promise.resolve(new FileTicketStore(join(workspace, '.pgagent', 'approvals'))),
  },
  {
    name: 'Redis',
    enabled: redisAvailable,
    env: () => ({ REDIS_URL, PGAGENT_REDIS_PREFIX: redisPrefix }),
    open: async () => {
      const { openRedisTicketStore } = await import('../../../../src/core/approvals/redisTicketStore');
      return openRedisTicketStore(REDIS_URL, { logger: silentLogger, prefix: redisPrefix });
    },
  },
];

describe.runIf(postgresAvailable)('approved writes under kill -9 (pg-agent exec in a child process)', () => {
  let scratch: ScratchDatabase;
  let workspace: string;

  beforeAll(async () => {
    expect(existsSync(CLI), 'dist/cli.js (npm test builds it; run npm run build first)').toBe(true);
    scratch = await createScratchDatabase();
    await execSql(scratch.url, SCHEMA);
  });

  afterAll(async () => {
    await scratch?.drop();
    if (redisAvailable) {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${redisPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  beforeEach(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-crash-'));
    await execSql(
      scratch.url,
      'UPDATE control SET statement_sleep = 0, commit_sleep = 0, commit_fails = false; UPDATE accounts SET balance = 0',
    );
    return () => rmSync(workspace, { recursive: true, force: true });
  });

  const balance = async () => Number(await queryValue(scratch.url, 'SELECT balance FROM accounts WHERE id = 1'));

  for (const setup of STORES) {
    describe.runIf(setup.enabled)(setup.name, () => {
      const cli = ([command, ...args]: string[]) =>
        runPgAgent([command ?? '', '--db', scratch.url, '--workspace', workspace, ...args], {
          cwd: workspace,
          env: { USER: 'dev', ...setup.env() },
        });

      /** A ticket for WRITE, held (exit 3) and approved, as a person would from a terminal. */
      async function approvedTicket(): Promise<string> {
        const held = await cli(['sql', '--json', '--no-input', '--', WRITE]);
        expect(held.code, held.stderr).toBe(3);
        const id = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
        const approved = await cli(['approvals', 'approve', id, '--comment', 'ok']);
        expect(approved.code, approved.stderr).toBe(0);
        return id;
      }

      function execInChild(
        id: string,
      ): ChildProcess & { done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
        const child = spawn(
          process.execPath,
          [CLI, 'exec', '--ticket', id, '--db', scratch.url, '--workspace', workspace, '--json'],
          {
            env: { ...process.env, USER: 'dev', ...setup.env() },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
          child.on('close', (code) => resolve({ code, stdout, stderr })),
        );
        return Object.assign(child, { done });
      }

      /** The backend of the executor once it sleeps in `query` (the statement, or its COMMIT). */
      async function sleepingBackend(query: string): Promise<number> {
        for (let i = 0; i < 600; i++) {
          const pid = await queryValue(
            scratch.url,
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep' AND query = '${query.replace(/'/g, "''")}'`,
          );
          if (typeof pid === 'number') return pid;
          await sleep(50);
        }
        throw new Error(`no backend ever slept in ${query}`);
      }

      async function backendGone(pid: number): Promise<void> {
        for (let i = 0; i < 600; i++) {
          if ((await queryValue(scratch.url, `SELECT count(*)::int FROM pg_stat_activity WHERE pid = ${pid}`)) === 0)
            return;
          await sleep(50);
        }
        throw new Error(`backend ${pid} never ended`);
      }

      async function show(id: string): Promise<{
        status: string;
        execution?: { xid: string; undoFile?: string };
        history: { action: string; comment?: string }[];
      }> {
        const shown = await cli(['approvals', 'show', id, '--json']);
        expect(shown.code, shown.stderr).toBe(0);
        return JSON.parse(shown.stdout) as {
          status: string;
          execution?: { xid: string; undoFile?: string };
          history: { action: string; comment?: string }[];
        };
      }

      it('killed while its statement runs: EXECUTING while the transaction lives, then FAILED; never run twice', async () => {
        const id = await approvedTicket();
        await execSql(scratch.url, 'UPDATE control SET statement_sleep = 3');
        const child = execInChild(id);
        const pid = await sleepingBackend(WRITE);
        child.kill('SIGKILL');
        await child.done;
        // The transaction is still open on the server: nobody can know yet, and nobody guesses.
        const during = await show(id);
        expect(during.status).toBe('EXECUTING');
        expect(during.execution?.xid).toMatch(/^\d+$/);
        await backendGone(pid);
        const after = await show(id);
        expect(after.status).toBe('FAILED');
        expect(after.history.at(-1)?.comment).toContain('did not commit');
        expect(await balance()).toBe(0);
        await execSql(scratch.url, 'UPDATE control SET statement_sleep = 0');
        const again = await cli(['exec', '--ticket', id]);
        expect(again.code).toBe(4);
        expect(again.stderr).toContain('already used');
        expect(await balance()).toBe(0);
      }, 60_000);

      it('killed during its COMMIT: resolved to EXECUTED, the undo script written before COMMIT kept; never run twice', async () => {
        const id = await approvedTicket();
        await execSql(scratch.url, 'UPDATE control SET commit_sleep = 3');
        const child = execInChild(id);
        const pid = await sleepingBackend('COMMIT');
        child.kill('SIGKILL');
        await child.done;
        expect((await show(id)).status).toBe('EXECUTING');
        await backendGone(pid);
        const after = await show(id);
        expect(after.status).toBe('EXECUTED');
        expect(await balance()).toBe(1);
        const undo = readFileSync(after.execution?.undoFile ?? '', 'utf8');
        expect(undo.startsWith(VOID_MARK)).toBe(false);
        expect(undo).toContain('"balance":0');
        const again = await cli(['exec', '--ticket', id]);
        expect(again.code).toBe(4);
        expect(await balance()).toBe(1);
      }, 60_000);

      it('killed during a COMMIT that then fails: FAILED, and its undo script marked void', async () => {
        const id = await approvedTicket();
        await execSql(scratch.url, 'UPDATE control SET commit_sleep = 3, commit_fails = true');
        const child = execInChild(id);
        const pid = await sleepingBackend('COMMIT');
        child.kill('SIGKILL');
        await child.done;
        await backendGone(pid);
        const after = await show(id);
        expect(after.status).toBe('FAILED');
        expect(await balance()).toBe(0);
        const undo = readFileSync(after.execution?.undoFile ?? '', 'utf8');
        expect(undo.startsWith(VOID_MARK)).toBe(true);
        expect(undo).toContain('did not commit');
      }, 60_000);

      it("a job killed during its write's COMMIT: job continue tells the model it was executed, and runs nothing twice", async () => {
        const server = await startScriptedModelServer();
        const modelEnv = { GEMINI_API_KEY: 'test-key', PGAGENT_GEMINI_BASE_URL: server.url };
        const job = ([action, ...args]: string[]) =>
          runPgAgent(['job', action ?? '', '--db', scratch.url, '--workspace', workspace, ...args], {
            cwd: workspace,
            env: { USER: 'dev', ...modelEnv, ...setup.env() },
          });
        try {
          server.script(planTurn(PLAN_V1, WRITE));
          const created = await job(['new', '--json', '--', 'Add one to the balance']);
          expect(created.code, created.stderr).toBe(0);
          const id = (JSON.parse(created.stdout) as { job: { id: string } }).job.id;
          server.script([inTactical({ functionCall: call('run_sql', { sql: WRITE, todo_id: 't1' }) })]);
          const held = await job(['approve', id, '--no-input', '--json']);
          expect(held.code, held.stderr).toBe(3);
          const ticket = (JSON.parse(held.stdout) as { stop: { ticketId: string } }).stop.ticketId;
          expect((await cli(['approvals', 'approve', ticket])).code).toBe(0);
          await execSql(scratch.url, 'UPDATE control SET commit_sleep = 3');
          const child = spawn(
            process.execPath,
            [CLI, 'job', 'continue', id, '--db', scratch.url, '--workspace', workspace, '--json'],
            {
              env: { ...process.env, USER: 'dev', ...modelEnv, ...setup.env() },
              stdio: 'ignore',
            },
          );
          const exited = new Promise((resolve) => child.on('close', resolve));
          const pid = await sleepingBackend('COMMIT');
          child.kill('SIGKILL');
          await exited;
          await backendGone(pid);
          server.script([inTactical({ functionCall: call('job_complete', { summary: 'balance raised' }) })]);
          const resumed = await job(['continue', id, '--json']);
          expect(resumed.code, resumed.stderr).toBe(0);
          expect((JSON.parse(resumed.stdout) as { stop: { kind: string } }).stop.kind).toBe('completed');
          expect(server.requests.filter(tactical).at(-1)?.text).toContain(`Executed earlier (ticket ${ticket}`);
          expect(await balance()).toBe(1);
          expect((await show(ticket)).status).toBe('EXECUTED');
        } finally {
          await server.close();
        }
      }, 90_000);

      it('five processes executing one ticket: exactly one runs it', async () => {
        const id = await approvedTicket();
        const children = Array.from({ length: 5 }, () => execInChild(id));
        const results = await Promise.all(children.map((c) => c.done));
        const codes = results.map((r) => r.code).sort();
        // The others are refused (exit 4): the ticket is spent, or being spent.
        expect(codes, results.map((r) => r.stderr).join('\n')).toEqual([0, 4, 4, 4, 4]);
        for (const r of results.filter((x) => x.code === 4)) expect(r.stderr).toMatch(/already used|EXECUTING/);
        expect(await balance()).toBe(1);
        expect((await show(id)).status).toBe('EXECUTED');
      }, 60_000);

      it('a store that fails after COMMIT: reported executed, undo kept, and the ticket resolved to EXECUTED when read', async () => {
        const id = await approvedTicket();
        const store = await setup.open(workspace);
        const db: Db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
        try {
          // The real store, except that recording the outcome fails (the store went away right after COMMIT).
          const failing: TicketStore = Object.assign(Object.create(store) as TicketStore, {
            finish: () => Promise.reject(new Error('the ticket store went away')),
          });
          const connection = (
            JSON.parse((await cli(['approvals', 'show', id, '--json'])).stdout) as { connection: string }
          ).connection;
          const result = await executeApproved(db, failing, id, {
            ...DEFAULT_SAFETY,
            connection,
            by: 'dev',
            undo: workspaceUndoSink(join(workspace, 'undo'), id),
            logger: silentLogger,
          });
          expect(result.outcomeNotRecorded).toContain('went away');
          expect(result.rows).toBe(1);
          expect(await balance()).toBe(1);
          expect(readFileSync(result.undoFile, 'utf8')).toContain('"balance":0');
          // Not recorded, but never "failed": the next read asks the database.
          store.setResolver(databaseResolver(() => Promise.resolve(db), silentLogger));
          expect((await store.get(id))?.status).toBe('EXECUTED');
          expect((await show(id)).status).toBe('EXECUTED');
        } finally {
          await store.close();
          await db.close();
        }
      }, 60_000);
    });
  }
});
