// Time from "New Job" to a frozen plan (issue 5): 30 jobs through create → strategic phase (list tables,
// describe a table, count rows, write workspace.md / plan.md / todos.yaml, plan_ready) → review stop, with
// a zero-latency scripted model on loopback, reported with and without the database's and the model's
// own time; then the size of a job folder at the review stop and after it completed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTicketStore } from '../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { JobRunner } from '../src/core/jobs/jobRunner';
import { JobStore } from '../src/core/jobs/jobStore';
import { createGeminiProvider } from '../src/core/llm/gemini';
import { silentLogger } from '../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { createScratchDatabase, execSql } from '../test/support/scratchDatabase';
import type { Rule } from '../test/support/scriptedModelServer';
import { startScriptedModelServer } from '../test/support/scriptedModelServer';
import { SHOP_SCHEMA } from '../test/support/shopSchema';
import { percentile, report } from './stats';
import { timedDb, timedProvider } from './timed';

const JOBS = 30;
const ARCHIVE = "UPDATE orders SET status = 'archived' WHERE status = 'cancelled' AND id <= 10";
const call = (name: string, args: object = {}) => ({ name, args });

const PLANNING: Rule[] = [
  {
    reply: {
      functionCalls: [
        call('list_tables'),
        call('describe_table', { table: 'orders' }),
        call('count_rows', { table: 'orders', where: "status = 'cancelled'" }),
      ],
    },
  },
  {
    reply: {
      functionCalls: [
        call('write_workspace', {
          content:
            '# Archive cancelled orders\n\n## Facts\n\n40 cancelled orders; order_items cascade; an audit trigger on orders.\n',
        }),
        call('write_plan', {
          content:
            '# Plan\n\n1. Archive cancelled orders in batches of 10 ids.\n2. Check the count after each batch.\n',
        }),
        call('write_todos', { todos: [{ id: 't1', title: 'Archive the first batch', sql: ARCHIVE }] }),
      ],
    },
  },
  { reply: { functionCall: call('plan_ready', { summary: 'archive cancelled orders in batches' }) } },
];

function du(dir: string): string {
  return execFileSync('du', ['-sh', '--apparent-size', dir], { encoding: 'utf8' }).split('\t')[0] ?? '?';
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench_job');
  const server = await startScriptedModelServer();
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-job-bench-'));
  const raw = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  const tickets = new FileTicketStore(join(dir, '.pgagent', 'approvals'), { logger: silentLogger });
  try {
    await execSql(scratch.url, SHOP_SCHEMA);
    const snapshot = await raw.withSession((s) => introspectSchema(s));
    const dbTime = { ms: 0 };
    const modelTime = { ms: 0 };
    const store = new JobStore(dir);
    const runner = new JobRunner({
      store,
      checkpointsDir: join(dir, '.pgagent', 'checkpoints'),
      db: timedDb(raw, dbTime),
      connectionKey: 'bench',
      ticketStore: tickets,
      provider: timedProvider(
        createGeminiProvider({
          model: 'gemini-2.5-flash',
          apiKey: 'bench',
          baseUrl: server.url,
          logger: silentLogger,
          maxRetries: 0,
        }),
        modelTime,
      ),
      loadSnapshot: () => Promise.resolve(snapshot),
      settings: DEFAULT_SAFETY,
      logger: silentLogger,
      requestedBy: 'bench',
    });
    const totals: number[] = [];
    const withoutDb: number[] = [];
    const overhead: number[] = [];
    let lastJob = '';
    for (let i = 0; i < JOBS + 3; i++) {
      server.script(PLANNING);
      dbTime.ms = 0;
      modelTime.ms = 0;
      const start = performance.now();
      const outcome = await runner.start({ task: 'Archive cancelled orders older than two years, in batches' });
      const total = performance.now() - start;
      if (outcome.stop.kind !== 'review') throw new Error(`job ${i} stopped at ${outcome.stop.kind}`);
      lastJob = outcome.job.id;
      if (i < 3) continue; // warm-up
      totals.push(total);
      withoutDb.push(total - dbTime.ms);
      overhead.push(total - dbTime.ms - modelTime.ms);
    }
    report(
      `New Job → frozen plan, ${JOBS} jobs (3 model calls), p50 / p95`,
      `${percentile(totals, 50).toFixed(1)} / ${percentile(totals, 95).toFixed(1)} ms`,
    );
    report(
      '  minus database query time, p50 / p95',
      `${percentile(withoutDb, 50).toFixed(1)} / ${percentile(withoutDb, 95).toFixed(1)} ms`,
    );
    report(
      '  minus database and model round trips (overhead)',
      `${percentile(overhead, 50).toFixed(1)} / ${percentile(overhead, 95).toFixed(1)} ms`,
    );

    const jobDir = store.jobDir(lastJob);
    report('job folder at the review stop (with its .history)', du(jobDir));
    report('  of which .history (git objects)', du(join(jobDir, '.history')));
    server.script([
      { reply: { functionCall: call('run_sql', { sql: ARCHIVE, todo_id: 't1' }) } },
      {
        reply: {
          functionCalls: [
            call('update_todo', { id: 't1', status: 'done' }),
            call('finish_phase', { summary: 'archived the first batch' }),
          ],
        },
      },
      { reply: { functionCall: call('job_complete', { summary: 'archived' }) } },
    ]);
    const held = await runner.approvePlan(lastJob, { by: 'bench' });
    if (held.stop.kind !== 'approval') throw new Error(`expected a held write, got ${held.stop.kind}`);
    const done = await runner.decideWrite(lastJob, { approve: true, by: 'bench' });
    if (done.stop.kind !== 'completed') throw new Error(`expected completion, got ${done.stop.kind}`);
    report('job folder after completion (one write, undo script)', du(jobDir));
    report('  checkpoints of that job', du(join(dir, '.pgagent', 'checkpoints', lastJob)));
  } finally {
    await tickets.close();
    await raw.close();
    await server.close();
    await scratch.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
