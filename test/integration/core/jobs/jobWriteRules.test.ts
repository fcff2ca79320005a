// Issue 25's two job rules on real PostgreSQL with the scripted Gemini server: a write proposed after a
// read of the same job was cut at the row cap, and a write whose WHERE filters on the column an executed
// earlier step SET, each get a lint finding in the ticket's impact and one risk level up.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobRunner } from '../../../../src/core/jobs/jobRunner';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { COLUMN_JUST_SET_RULE, TRUNCATED_READ_RULE } from '../../../../src/core/sql/sweepingWrites';
import { ARCHIVE, call, inTactical, PLAN_V1, planTurn } from '../../../support/jobScript';
import { queryValue } from '../../../support/scratchDatabase';
import { postgresAvailable } from '../../../support/services';
import {
  approveAndRunBehindTheJob,
  jobAtHeldWrite,
  scriptedJobRunner,
  useScriptedWorkspace,
  useShopDatabase,
} from '../../../support/shopDatabase';

const ZERO_ARCHIVED = "UPDATE orders SET total = 0 WHERE status = 'archived'";

describe.runIf(postgresAvailable)('job write rules (issue 25) on PostgreSQL with a scripted model', () => {
  const shop = useShopDatabase();
  const rig = useScriptedWorkspace('pgagent-job-rules');

  /** A fresh runner per step (state only from files and checkpoints), with a row cap of 5 for reads. */
  function runner(): JobRunner {
    return scriptedJobRunner(shop, rig, { settings: { ...DEFAULT_SAFETY, maxRows: 5 } });
  }

  it('flags a write after a cut read, then a write filtering on the column the executed step set, each one level up', async () => {
    rig.server.script(planTurn(PLAN_V1));
    const review = await runner().start({ task: 'Archive cancelled orders' });
    if (review.stop.kind !== 'review') throw new Error(`expected a review, got ${review.stop.kind}`);

    // A read cut at the row cap (5 of the 60 orders), then the archive write: held, flagged, LOW → MEDIUM.
    rig.server.script([
      inTactical({
        functionCalls: [
          call('run_read_sql', { sql: 'SELECT id, status FROM orders ORDER BY id' }),
          call('run_sql', { sql: ARCHIVE, todo_id: 't1' }),
        ],
      }),
    ]);
    const held = await runner().approvePlan(review.job.id, { by: 'reviewer' });
    if (held.stop.kind !== 'approval') throw new Error(`expected an approval stop, got ${held.stop.kind}`);
    const first = await rig.tickets.get(held.stop.ticketId);
    const cut = first?.impact.lint.find((f) => f.rule === TRUNCATED_READ_RULE);
    expect(cut?.message).toContain('returned only the first 5 rows');
    expect(cut?.message).toContain('orders');
    expect(first?.impact.risk).toBe('MEDIUM'); // the same write without the cut read is LOW (jobGraph.test.ts)
    expect(first?.impact.warnings.join('\n')).toContain('one level up');
    expect(first?.impact.lint.some((f) => f.rule === COLUMN_JUST_SET_RULE)).toBe(false);
    const impactFile = JSON.parse(
      readFileSync(join(new JobStore(rig.workspace).jobDir(review.job.id), 'impact/001.json'), 'utf8'),
    ) as { lint: { rule: string }[] };
    expect(impactFile.lint.map((f) => f.rule)).toContain(TRUNCATED_READ_RULE);

    // Approved and run: it SET orders.status. The next write filters on orders.status: flagged, naming the step.
    rig.server.script([inTactical({ functionCall: call('run_sql', { sql: ZERO_ARCHIVED, todo_id: 't1' }) })]);
    const next = await runner().decideWrite(review.job.id, { approve: true, by: 'reviewer' });
    expect(Number(await queryValue(shop.scratch.url, "SELECT count(*) FROM orders WHERE status = 'archived'"))).toBe(2);
    expect(rig.server.requests.at(-1)?.text ?? '').toContain('5 row(s) (truncated at the row cap)'); // what the model was shown
    if (next.stop.kind !== 'approval') throw new Error(`expected a second approval stop, got ${next.stop.kind}`);
    const second = await rig.tickets.get(next.stop.ticketId);
    const justSet = second?.impact.lint.find((f) => f.rule === COLUMN_JUST_SET_RULE);
    expect(justSet?.message).toContain('orders.status');
    expect(justSet?.message).toContain(held.stop.sqlFile);
    // Both findings, one level up once; nothing ran.
    expect(second?.impact.lint.some((f) => f.rule === TRUNCATED_READ_RULE)).toBe(true);
    expect(second?.impact.risk).toBe('MEDIUM');
    expect(second?.status).toBe('PENDING_APPROVAL');
    expect(
      Number(await queryValue(shop.scratch.url, "SELECT count(*) FROM orders WHERE status = 'archived' AND total = 0")),
    ).toBe(0);
  });

  it('remembers the column set by a write that ran before its process died (continue reports it): the next write is flagged', async () => {
    const { jobId, ticketId } = await jobAtHeldWrite(rig, runner);
    // No cut read in this job: the first write is not flagged.
    expect((await rig.tickets.get(ticketId))?.impact.lint.some((f) => f.rule === TRUNCATED_READ_RULE)).toBe(false);
    // The job's process approved and ran the write, then died before its graph recorded anything.
    await approveAndRunBehindTheJob(shop, rig, ticketId);
    rig.server.script([inTactical({ functionCall: call('run_sql', { sql: ZERO_ARCHIVED, todo_id: 't1' }) })]);
    const next = await runner().continue(jobId);
    if (next.stop.kind !== 'approval') throw new Error(`expected an approval stop, got ${next.stop.kind}`);
    const lint = (await rig.tickets.get(next.stop.ticketId))?.impact.lint ?? [];
    expect(lint.map((f) => f.rule)).toEqual(expect.arrayContaining([COLUMN_JUST_SET_RULE]));
    expect(lint.some((f) => f.rule === TRUNCATED_READ_RULE)).toBe(false);
  });
});
