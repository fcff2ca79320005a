import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../../../src/shared/limits';
import { parseWebviewMessage } from '../../../src/shared/panelMessages';

describe('parseWebviewMessage', () => {
  it('accepts the messages of the protocol', () => {
    expect(parseWebviewMessage({ type: 'ready' })).toEqual({ ok: true, message: { type: 'ready' } });
    expect(parseWebviewMessage({ type: 'runCommand', command: 'openSampleDatabase' })).toEqual({
      ok: true,
      message: { type: 'runCommand', command: 'openSampleDatabase' },
    });
  });

  it("accepts the answer's copy and open-in-editor intents", () => {
    expect(parseWebviewMessage({ type: 'runCommand', command: 'copyAnswerSql' })).toEqual({
      ok: true,
      message: { type: 'runCommand', command: 'copyAnswerSql' },
    });
    expect(parseWebviewMessage({ type: 'runCommand', command: 'openAnswerSql' })).toEqual({
      ok: true,
      message: { type: 'runCommand', command: 'openAnswerSql' },
    });
  });

  it.each([
    ['a string', 'ready'],
    ['null', null],
    ['an unknown type', { type: 'executeSql', sql: 'DROP TABLE orders' }],
    ['a command that is not a panel command', { type: 'runCommand', command: 'workbench.action.terminal.new' }],
    ['extra fields', { type: 'ready', approve: true }],
    ['a missing field', { type: 'runCommand' }],
    ['a copy that carries its own SQL', { type: 'runCommand', command: 'copyAnswerSql', sql: 'DROP TABLE orders' }],
    ['a bare copySql message', { type: 'copySql' }],
    ['an answer command with a different case', { type: 'runCommand', command: 'OpenAnswerSql' }],
  ])('refuses %s with a reason', (_what, raw) => {
    const parsed = parseWebviewMessage(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason.length).toBeGreaterThan(0);
  });

  const jobId = 'job_0123456789abcdef';

  it('accepts every job intent, each naming its job', () => {
    const intents = [
      { type: 'selectJob', jobId },
      { type: 'approvePlan', jobId, ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa', planHash: 'a'.repeat(64) },
      {
        type: 'requestChanges',
        jobId,
        ticketId: null,
        planHash: 'b'.repeat(64),
        feedback: 'Split the archive into monthly batches.',
      },
      { type: 'skipReview', jobId, ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa', planHash: null },
      { type: 'pauseJob', jobId },
      { type: 'cancelJob', jobId },
      { type: 'continueJob', jobId },
      { type: 'sendChat', jobId, text: 'Why this order?', debug: false },
      { type: 'applyPlanEdit', jobId, editId: 'edit_1' },
      { type: 'discardPlanEdit', jobId, editId: 'edit_1' },
      { type: 'openJobFile', jobId, path: 'sql/001-archive-orders.sql' },
      { type: 'openAsk', threadId: 'ask_0123456789abcdef' },
      { type: 'runCommand', command: 'newJob' },
      { type: 'runCommand', command: 'openJob' },
    ];
    for (const message of intents) expect(parseWebviewMessage(message)).toEqual({ ok: true, message });
  });

  it('refuses a plan decision without the hash of the plan it was made on', () => {
    expect(parseWebviewMessage({ type: 'approvePlan', jobId }).ok).toBe(false);
    expect(parseWebviewMessage({ type: 'approvePlan', jobId, ticketId: null, planHash: 'not-a-hash' }).ok).toBe(false);
  });

  it('accepts feedback and chat messages up to the size limit', () => {
    const longest = 'x'.repeat(MAX_MESSAGE_CHARS);
    expect(
      parseWebviewMessage({
        type: 'requestChanges',
        jobId,
        ticketId: null,
        planHash: 'a'.repeat(64),
        feedback: longest,
      }).ok,
    ).toBe(true);
    expect(parseWebviewMessage({ type: 'sendChat', jobId, text: longest, debug: true }).ok).toBe(true);
  });

  it.each([
    ['a job id of another shape', { type: 'approvePlan', jobId: 'job_123' }],
    ['a job id with a path in it', { type: 'selectJob', jobId: '../job_0123456789abcdef' }],
    ['upper-case hex in a job id', { type: 'cancelJob', jobId: 'job_0123456789ABCDEF' }],
    ['a job intent without its job', { type: 'approvePlan' }],
    ['empty feedback', { type: 'requestChanges', jobId, ticketId: null, planHash: 'a'.repeat(64), feedback: '' }],
    ['blank feedback', { type: 'requestChanges', jobId, ticketId: null, planHash: 'a'.repeat(64), feedback: '   \n ' }],
    [
      'feedback over 20,000 characters',
      {
        type: 'requestChanges',
        jobId,
        ticketId: null,
        planHash: 'a'.repeat(64),
        feedback: 'x'.repeat(MAX_MESSAGE_CHARS + 1),
      },
    ],
    ['feedback that is not text', { type: 'requestChanges', jobId, feedback: ['a'] }],
    [
      'a chat message over 20,000 characters',
      { type: 'sendChat', jobId, text: 'x'.repeat(MAX_MESSAGE_CHARS + 1), debug: false },
    ],
    ['a chat message without the debug flag', { type: 'sendChat', jobId, text: 'hi' }],
    ['a chat debug flag that is a string', { type: 'sendChat', jobId, text: 'hi', debug: 'true' }],
    ['an approval that carries a comment', { type: 'approvePlan', jobId, comment: 'ok' }],
    ['a plan edit id with a slash', { type: 'applyPlanEdit', jobId, editId: '../plan.md' }],
    ['an absolute job file', { type: 'openJobFile', jobId, path: '/etc/passwd' }],
    ['a job file climbing out', { type: 'openJobFile', jobId, path: 'sql/../../job_1111111111111111/plan.md' }],
    ['a job file starting with ..', { type: 'openJobFile', jobId, path: '../secrets.txt' }],
    ['a job file in the history', { type: 'openJobFile', jobId, path: '.history/config' }],
    ['a job file with a backslash', { type: 'openJobFile', jobId, path: 'sql\\..\\..\\x' }],
    ['a job file path that is too long', { type: 'openJobFile', jobId, path: `${'a/'.repeat(200)}plan.md` }],
    ['a job command that is not a panel command', { type: 'runCommand', command: 'deleteJob' }],
  ])('refuses %s', (_what, raw) => {
    const parsed = parseWebviewMessage(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason.length).toBeGreaterThan(0);
  });
});
