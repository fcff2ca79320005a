// Issue 25 in a job: an approved DDL write that cannot get its locks (an `idle in transaction` session holds
// one on the table) stops with LOCK_UNAVAILABLE and nothing ran. The job does not call that a failure: it
// waits at the same write (same ticket, still APPROVED and unspent, the model not told anything yet), and
// once the holder is gone, Continue (resumeFromTicket, as `pg-agent job continue`) runs that ticket.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { call, inTactical, tactical } from '../../../support/jobScript';
import { runPgAgent } from '../../../support/cliHarness';
import { queryValue } from '../../../support/scratchDatabase';
import { postgresAvailable } from '../../../support/services';
import {
  jobAtHeldWrite,
  scriptedJobRunner,
  useScriptedWorkspace,
  useShopDatabase,
} from '../../../support/shopDatabase';

const ALTER = 'ALTER TABLE orders ADD COLUMN lock_test_note text';

describe.runIf(postgresAvailable)('a job write that cannot get its locks waits, and runs on Continue', () => {
  const shop = useShopDatabase();
  const rig = useScriptedWorkspace('pgagent-job-lockwait', 'all');

  const runner = () =>
    scriptedJobRunner(shop, rig, { settings: { ...DEFAULT_SAFETY, ddlLockTimeoutMs: 50, ddlLockAttempts: 2 } });
  const hasColumn = async () =>
    Boolean(
      await queryValue(
        shop.scratch.url,
        "SELECT count(*) > 0 FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'lock_test_note'",
      ),
    );

  it('LOCK_UNAVAILABLE keeps the job at the same approved write; the holder gone, Continue runs it once', async () => {
    const { jobId, ticketId } = await jobAtHeldWrite(rig, runner, ALTER, 'Add a note column to orders');

    const holder = new pg.Client({ connectionString: shop.scratch.url, application_name: 'lock-holder' });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT count(*) FROM orders');
      const holderPid = Number((await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
      const requestsBefore = rig.server.requests.length;
      const waiting = await runner().decideWrite(jobId, { approve: true, by: 'reviewer' });
      // Waiting at the same write, nothing ran, the ticket still approved and unspent, the model not asked.
      expect(waiting.stop).toMatchObject({ kind: 'approval', ticketId });
      // The stop says who is in the way (the CLI prints it, VS Code's lens shows it as LOCK_UNAVAILABLE).
      expect(waiting.stop.kind === 'approval' ? waiting.stop.lockWait : '').toContain(`pid ${holderPid}`);
      expect(waiting.job.status).not.toBe('failed');
      expect(await hasColumn()).toBe(false);
      const ticket = await rig.tickets.get(ticketId);
      expect(ticket?.status).toBe('APPROVED');
      expect(ticket?.execution).toBeUndefined();
      expect(rig.server.requests.length).toBe(requestsBefore);
      const audit = readFileSync(join(new JobStore(rig.workspace).jobDir(jobId), 'audit.jsonl'), 'utf8');
      expect(audit).toContain('LOCK_UNAVAILABLE');
      expect(audit).toContain(String(holderPid));
      // The CLI shows the job waiting at that write, who is in the way, and how to go on.
      const shown = await runPgAgent(['job', '--db', shop.scratch.url, '--workspace', rig.workspace, 'show', jobId], {
        cwd: rig.workspace,
        env: { USER: 'tester' },
      });
      expect(shown.stdout).toContain(`Not run yet: `);
      expect(shown.stdout).toContain(`pid ${holderPid}`);
      expect(shown.stdout).toContain(`pg-agent job continue ${jobId}`);
      // Continue while the holder is still there: it waits again, still nothing ran.
      const again = await runner().resumeFromTicket(jobId);
      expect(again.stop).toMatchObject({ kind: 'approval', ticketId });
      expect(await hasColumn()).toBe(false);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }

    rig.server.script([inTactical({ functionCall: call('job_complete', { summary: 'note column added' }) })]);
    const done = await runner().resumeFromTicket(jobId);
    expect(done.stop.kind).toBe('completed');
    expect(await hasColumn()).toBe(true);
    expect((await rig.tickets.get(ticketId))?.status).toBe('EXECUTED');
    expect(rig.server.requests.filter(tactical).at(-1)?.text ?? '').toContain('Executed after approval by reviewer');
  });
});
