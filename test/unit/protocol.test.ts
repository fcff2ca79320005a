import { describe, expect, it } from 'vitest';
import { parseWebviewMessage } from '../../src/shared/protocol';

describe('parseWebviewMessage', () => {
  it('accepts the messages of the protocol', () => {
    expect(parseWebviewMessage({ type: 'ready' })).toEqual({ ok: true, message: { type: 'ready' } });
    expect(parseWebviewMessage({ type: 'runCommand', command: 'openSampleDatabase' })).toEqual({
      ok: true,
      message: { type: 'runCommand', command: 'openSampleDatabase' },
    });
  });

  it("accepts the answer's copy and open-in-editor intents", () => {
    expect(parseWebviewMessage({ type: 'runCommand', command: 'copyAnswerSql' })).toEqual({ ok: true, message: { type: 'runCommand', command: 'copyAnswerSql' } });
    expect(parseWebviewMessage({ type: 'runCommand', command: 'openAnswerSql' })).toEqual({ ok: true, message: { type: 'runCommand', command: 'openAnswerSql' } });
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
});
