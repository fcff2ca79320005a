/**
 * The set-up most job and agent tests share: a scratch database with the shop schema for the describe
 * block (opened once, its schema read once), and, per test, a scripted model server and a workspace with a
 * file ticket store. Call these inside `describe`: they register the hooks; the returned objects are filled
 * in before the tests run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { FileTicketStore } from '../../src/core/approvals/fileTicketStore';
import type { Env } from '../../src/core/db/connectionTarget';
import { parseConnectionUrl } from '../../src/core/db/connectionTarget';
import type { Db } from '../../src/core/db/db';
import { introspectSchema } from '../../src/core/db/introspect';
import { openPostgres } from '../../src/core/db/postgresDb';
import type { JobRunnerDeps } from '../../src/core/jobs/jobRunner';
import { JobRunner } from '../../src/core/jobs/jobRunner';
import { JobStore } from '../../src/core/jobs/jobStore';
import { silentLogger } from '../../src/core/platform/logger';
import { executeApproved } from '../../src/core/sql/executeApproved';
import type { ExecutionResult } from '../../src/core/sql/approvedTicket';
import { DEFAULT_SAFETY } from '../../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../../src/core/sql/writeArtifacts';
import type { SchemaSnapshot } from '../../src/shared/schema';
import type { CliRun } from './cliHarness';
import { runPgAgent } from './cliHarness';
import type { ScratchDatabase } from './scratchDatabase';
import { createScratchDatabase, execSql } from './scratchDatabase';
import type { ScriptedModelServer } from './scriptedModelServer';
import { startScriptedModelServer } from './scriptedModelServer';
import { ARCHIVE, call, inTactical, PLAN_V1, planTurn } from './jobScript';
import { SHOP_SCHEMA } from './shopSchema';
import { scriptedGemini } from './scriptedGemini';

/** beforeAll: a scratch database with SHOP_SCHEMA (for a test that runs pg-agent on it); afterAll: dropped. */
export function useShopScratch(): { scratch: ScratchDatabase } {
  const shop = {} as { scratch: ScratchDatabase };
  beforeAll(async () => {
    shop.scratch = await createScratchDatabase();
    await execSql(shop.scratch.url, SHOP_SCHEMA);
  });
  afterAll(async () => {
    await shop.scratch?.drop();
  });
  return shop;
}

export interface ShopWorkspace {
  scratch: ScratchDatabase;
  workspace: string;
  /** `pg-agent <argv[0]> --db <scratch> --workspace <workspace> <argv[1…]>` in-process, in the workspace, as "tester". */
  cli(
    argv: string[],
    options?: { env?: Env; answers?: string[]; stdin?: string },
  ): Promise<CliRun & { prompts: string[] }>;
}

/** useShopScratch and a workspace folder `<prefix>-…` for the describe block (removed afterAll), and `cli` on both. */
export function useShopWorkspace(prefix: string): ShopWorkspace {
  const shop = useShopScratch() as ShopWorkspace;
  beforeAll(() => {
    shop.workspace = mkdtempSync(join(tmpdir(), `${prefix}-`));
  });
  afterAll(() => {
    if (shop.workspace) rmSync(shop.workspace, { recursive: true, force: true });
  });
  shop.cli = (argv, options = {}) =>
    runPgAgent([...argv.slice(0, 1), '--db', shop.scratch.url, '--workspace', shop.workspace, ...argv.slice(1)], {
      cwd: shop.workspace,
      env: { USER: 'tester' },
      ...options,
    });
  return shop;
}

export interface ShopDatabase {
  scratch: ScratchDatabase;
  db: Db;
  snapshot: SchemaSnapshot;
}

/** beforeAll: a scratch database where `schemaSql` ran and a Db (of the code under test) on it; afterAll: closed and dropped. */
export function useSchemaDatabase(schemaSql: string): { scratch: ScratchDatabase; db: Db } {
  const database = {} as { scratch: ScratchDatabase; db: Db };
  beforeAll(async () => {
    database.scratch = await createScratchDatabase();
    await execSql(database.scratch.url, schemaSql);
    database.db = await openPostgres(parseConnectionUrl(database.scratch.url), { logger: silentLogger });
  });
  afterAll(async () => {
    await database.db?.close();
    await database.scratch?.drop();
  });
  return database;
}

/** useSchemaDatabase with SHOP_SCHEMA, and its schema snapshot (read once, beforeAll). */
export function useShopDatabase(): ShopDatabase {
  const shop = useSchemaDatabase(SHOP_SCHEMA) as ShopDatabase;
  beforeAll(async () => {
    shop.snapshot = await shop.db.withSession((session) => introspectSchema(session));
  });
  return shop;
}

export interface ScriptedWorkspace {
  server: ScriptedModelServer;
  workspace: string;
  /** The workspace's own store (.pgagent/approvals). */
  tickets: FileTicketStore;
}

/**
 * A scripted model server and a fresh workspace with its ticket store: per test (`each`, the default) or
 * once for the describe block.
 */
export function useScriptedWorkspace(prefix: string, scope: 'each' | 'all' = 'each'): ScriptedWorkspace {
  const rig = {} as ScriptedWorkspace;
  const [before, after] = scope === 'each' ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    rig.server = await startScriptedModelServer();
    rig.workspace = mkdtempSync(join(tmpdir(), `${prefix}-`));
    rig.tickets = new FileTicketStore(join(rig.workspace, '.pgagent', 'approvals'), { logger: silentLogger });
  });
  after(async () => {
    await rig.tickets?.close();
    await rig.server?.close();
    if (rig.workspace) rmSync(rig.workspace, { recursive: true, force: true });
  });
  return rig;
}

/** A scripted model server per test (started beforeEach, closed afterEach) and the environment that uses it. */
export function useScriptedModel(): { server: ScriptedModelServer; env: () => Record<string, string> } {
  const model = { env: () => scriptedModelEnv(model.server) } as {
    server: ScriptedModelServer;
    env: () => Record<string, string>;
  };
  beforeEach(async () => {
    model.server = await startScriptedModelServer();
  });
  afterEach(async () => {
    await model.server?.close();
  });
  return model;
}

/** A fresh job runner on the shop database with the scripted model (nothing shared in memory with the previous one). */
export function scriptedJobRunner(
  shop: ShopDatabase,
  rig: ScriptedWorkspace,
  overrides: Partial<JobRunnerDeps> = {},
): JobRunner {
  return new JobRunner({
    store: new JobStore(rig.workspace),
    checkpointsDir: join(rig.workspace, '.pgagent', 'checkpoints'),
    db: shop.db,
    connectionKey: shop.scratch.url,
    ticketStore: rig.tickets,
    provider: scriptedGemini(rig.server),
    loadSnapshot: () => Promise.resolve(shop.snapshot),
    settings: DEFAULT_SAFETY,
    logger: silentLogger,
    requestedBy: 'tester',
    ...overrides,
  });
}

/** The environment a `pg-agent` process (in-process or not) needs to use the scripted model, as user "tester". */
export function scriptedModelEnv(server: ScriptedModelServer): Record<string, string> {
  return { USER: 'tester', GEMINI_API_KEY: 'test-key', PGAGENT_GEMINI_BASE_URL: server.url };
}

/**
 * A job planned with PLAN_V1, its plan approved by "reviewer", stopped at its held write of `sql` (a fresh
 * runner from `runner` for each step): the job's id and the write's ticket.
 */
export async function jobAtHeldWrite(
  rig: ScriptedWorkspace,
  runner: () => JobRunner,
  sql = ARCHIVE,
  task = 'Archive cancelled orders',
): Promise<{ jobId: string; ticketId: string }> {
  rig.server.script([...planTurn(PLAN_V1), inTactical({ functionCall: call('run_sql', { sql, todo_id: 't1' }) })]);
  const review = await runner().start({ task });
  const held = await runner().approvePlan(review.job.id, { by: 'reviewer' });
  if (held.stop.kind !== 'approval') throw new Error(`expected a held write, got ${held.stop.kind}`);
  return { jobId: review.job.id, ticketId: held.stop.ticketId };
}

/**
 * What a job's process does at its held write before it dies, without its graph recording anything: the
 * ticket approved by "reviewer" and executed.
 */
export async function approveAndRunBehindTheJob(
  shop: ShopDatabase,
  rig: ScriptedWorkspace,
  ticketId: string,
): Promise<ExecutionResult> {
  await rig.tickets.decide(ticketId, { approve: true, by: 'reviewer' });
  return executeApproved(shop.db, rig.tickets, ticketId, {
    ...DEFAULT_SAFETY,
    connection: shop.scratch.url,
    by: 'reviewer',
    undo: workspaceUndoSink(join(rig.workspace, 'undo'), ticketId),
    logger: silentLogger,
  });
}
