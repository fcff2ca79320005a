import { describe, expect, it } from 'vitest';
import type { CockpitRoutes } from '../../../src/host/jobs/cockpit/cockpitRouting';
import { routeCockpitMessage } from '../../../src/host/jobs/cockpit/cockpitRouting';

const jobId = 'job_0123456789abcdef';
const shown = 'tkt_aaaaaaaaaaaaaaaaaaaa';
const other = 'tkt_bbbbbbbbbbbbbbbbbbbb';

/** Routes that record what they were asked to do, and a logger that records its warnings. */
function recorder(ticket: string | null = shown) {
  const calls: unknown[][] = [];
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const routes: CockpitRoutes = {
    ready: () => void calls.push(['ready']),
    shownTicket: () => ticket ?? undefined,
    job: (intent) => Promise.resolve(void calls.push(['job', intent])),
    decide: (t, approve) => Promise.resolve(void calls.push(['decide', t, approve])),
    openSql: (t) => Promise.resolve(void calls.push(['openSql', t])),
    openUndo: (t) => Promise.resolve(void calls.push(['openUndo', t])),
    useSaferSql: (t, rule) => Promise.resolve(void calls.push(['useSaferSql', t, rule])),
  };
  const logger = {
    warn: (message: string, fields?: Record<string, unknown>) => void warnings.push({ message, fields }),
  };
  return { calls, warnings, routes, logger };
}

describe('routeCockpitMessage', () => {
  it('logs and ignores a malformed message: nothing is acted on', async () => {
    for (const raw of [
      null,
      'approvePlan',
      { type: 'approvePlan', jobId },
      { type: 'decide', ticketId: shown, approve: 'yes' },
      { type: 'runCommand', command: 'openSampleDatabase' },
    ]) {
      const r = recorder();
      await routeCockpitMessage(raw, jobId, r.routes, r.logger);
      expect(r.calls, JSON.stringify(raw)).toEqual([]);
      expect(r.warnings.map((w) => w.message)).toEqual(['ignored a malformed cockpit message']);
      expect(r.warnings[0]?.fields?.jobId).toBe(jobId);
      expect(String(r.warnings[0]?.fields?.reason)).not.toBe('');
    }
  });

  it('logs and ignores an intent for another job, and a decision on a write the cockpit does not show', async () => {
    const r = recorder();
    await routeCockpitMessage({ type: 'cancelJob', jobId: 'job_fedcba9876543210' }, jobId, r.routes, r.logger);
    await routeCockpitMessage({ type: 'decide', ticketId: other, approve: true }, jobId, r.routes, r.logger);
    const none = recorder(null);
    await routeCockpitMessage({ type: 'decide', ticketId: shown, approve: true }, jobId, none.routes, none.logger);
    expect([...r.calls, ...none.calls]).toEqual([]);
    expect([...r.warnings, ...none.warnings].map((w) => w.message)).toEqual([
      'ignored a malformed cockpit message',
      'ignored a cockpit message about a write it does not show',
      'ignored a cockpit message about a write it does not show',
    ]);
  });

  it('hands each valid message to its one host path', async () => {
    const r = recorder();
    const intent = {
      type: 'requestChanges',
      jobId,
      ticketId: null,
      planHash: 'c'.repeat(64),
      feedback: 'Smaller batches.',
    };
    for (const raw of [
      { type: 'ready' },
      intent,
      { type: 'decide', ticketId: shown, approve: false },
      { type: 'openSql', ticketId: shown },
      { type: 'openUndo', ticketId: shown },
      { type: 'useSaferSql', ticketId: shown, rule: 'add-column-default' },
    ]) {
      await routeCockpitMessage(raw, jobId, r.routes, r.logger);
    }
    expect(r.calls).toEqual([
      ['ready'],
      ['job', intent],
      ['decide', shown, false],
      ['openSql', shown],
      ['openUndo', shown],
      ['useSaferSql', shown, 'add-column-default'],
    ]);
    expect(r.warnings).toEqual([]);
  });
});
