import { describe, expect, it } from 'vitest';
import { COCKPIT_MESSAGE_TYPES, parseCockpitMessage } from '../../../src/shared/cockpitProtocol';

const jobId = 'job_0123456789abcdef';
const other = 'job_fedcba9876543210';
const ticketId = 'tkt_aaaaaaaaaaaaaaaaaaaa';
const planHash = 'a'.repeat(64);

describe('parseCockpitMessage', () => {
  it("accepts the panel protocol's job intents and write decisions for the cockpit's own job", () => {
    const messages = [
      { type: 'ready' },
      { type: 'approvePlan', jobId, ticketId, planHash },
      { type: 'requestChanges', jobId, ticketId: null, planHash, feedback: 'Split the archive into monthly batches.' },
      { type: 'skipReview', jobId, ticketId, planHash: null },
      { type: 'pauseJob', jobId },
      { type: 'cancelJob', jobId },
      { type: 'continueJob', jobId },
      { type: 'sendChat', jobId, text: 'Why this order?', debug: true },
      { type: 'applyPlanEdit', jobId, editId: 'edit_1' },
      { type: 'discardPlanEdit', jobId, editId: 'edit_1' },
      { type: 'openJobFile', jobId, path: 'plan.md' },
      { type: 'decide', ticketId, approve: true },
      { type: 'openSql', ticketId },
      { type: 'openUndo', ticketId },
      { type: 'useSaferSql', ticketId, rule: 'add-column-default' },
    ];
    expect(new Set(messages.map((m) => m.type))).toEqual(new Set(COCKPIT_MESSAGE_TYPES));
    for (const message of messages) expect(parseCockpitMessage(message, jobId)).toEqual({ ok: true, message });
  });

  it('refuses an intent naming another job (a stale or forged click never acts on another job)', () => {
    const parsed = parseCockpitMessage({ type: 'approvePlan', jobId: other, ticketId, planHash }, jobId);
    expect(parsed).toEqual({ ok: false, reason: `jobId: ${other} is not this cockpit's job (${jobId})` });
  });

  it("refuses the side panel's own messages, which a cockpit has no business sending", () => {
    expect(parseCockpitMessage({ type: 'runCommand', command: 'openSampleDatabase' }, jobId)).toEqual({
      ok: false,
      reason: 'type: runCommand is not a cockpit message',
    });
    expect(parseCockpitMessage({ type: 'selectJob', jobId }, jobId).ok).toBe(false);
  });

  it.each([
    ['a string', 'ready'],
    ['null', null],
    ['an unknown type', { type: 'executeSql', sql: 'DROP TABLE orders' }],
    ['extra fields on a decision', { type: 'decide', ticketId, approve: true, sql: 'DROP TABLE orders' }],
    ['a malformed ticket id', { type: 'decide', ticketId: 'tkt_../../x', approve: true }],
    ['a plan approval without the plan hash', { type: 'approvePlan', jobId, ticketId }],
    ['blank feedback', { type: 'requestChanges', jobId, ticketId, planHash, feedback: '   ' }],
    ['a job file outside the job folder', { type: 'openJobFile', jobId, path: '../../etc/passwd' }],
  ])('refuses %s with a reason', (_what, raw) => {
    const parsed = parseCockpitMessage(raw, jobId);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason.length).toBeGreaterThan(0);
  });
});
