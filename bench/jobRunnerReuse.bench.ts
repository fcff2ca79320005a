// One runner per window (issue 23): what reading where a job stands costs with a new JobRunner per read (each
// compiles the job graph again, as each cockpit click did) against the window's long-lived runner (compiled
// once). A job at its plan review, written by createAtReview (no database, no model); 200 reads each way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTicketStore } from '../src/core/approvals/fileTicketStore';
import type { Db } from '../src/core/db/db';
import type { JobRunnerDeps } from '../src/core/jobs/jobRunner';
import { JobRunner } from '../src/core/jobs/jobRunner';
import { JobStore } from '../src/core/jobs/jobStore';
import { silentLogger } from '../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { percentile, report } from './stats';

const READS = 200;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-runner-reuse-'));
  const tickets = new FileTicketStore(join(dir, '.pgagent', 'approvals'), { logger: silentLogger });
  const refuse = () => Promise.reject(new Error('no database in this bench'));
  const offline: Db = {
    kind: 'postgres',
    label: 'none',
    query: refuse,
    queryText: refuse,
    withSession: refuse,
    close: () => Promise.resolve(),
  };
  const deps: JobRunnerDeps = {
    store: new JobStore(dir),
    checkpointsDir: join(dir, '.pgagent', 'checkpoints'),
    db: offline,
    connectionKey: 'bench',
    ticketStore: tickets,
    provider: undefined,
    loadSnapshot: refuse,
    settings: DEFAULT_SAFETY,
    logger: silentLogger,
    requestedBy: 'bench',
  };
  try {
    const { job } = await new JobRunner(deps).createAtReview({
      task: 'Archive cancelled orders',
      plan: '# Plan\n\n1. Archive.\n',
      todos: [],
      origin: 'bench',
      audit: [],
    });
    const perRead: number[] = [];
    for (let i = 0; i < READS; i++) {
      const started = performance.now();
      await new JobRunner(deps).outcome(job.id);
      perRead.push(performance.now() - started);
    }
    const windowRunner = new JobRunner(deps);
    await windowRunner.outcome(job.id);
    const reused: number[] = [];
    for (let i = 0; i < READS; i++) {
      const started = performance.now();
      await windowRunner
        .forStep({ db: offline, connectionKey: 'bench', provider: undefined, loadSnapshot: refuse })
        .outcome(job.id);
      reused.push(performance.now() - started);
    }
    report('outcome, new JobRunner per read: median', percentile(perRead, 50), 'ms');
    report('outcome, new JobRunner per read: p95', percentile(perRead, 95), 'ms');
    report('outcome, the window runner (forStep): median', percentile(reused, 50), 'ms');
    report('outcome, the window runner (forStep): p95', percentile(reused, 95), 'ms');
  } finally {
    await tickets.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
