// The session view's messages are untrusted input: only well-formed intents reach the host.
import { describe, expect, it } from 'vitest';
import { MAX_COLLAB_TEXT, parseCollabMessage } from '../../../src/shared/collabProtocol';

const ID = 'collab_0123456789abcdef';

describe('session view messages', () => {
  it.each([
    { type: 'ready' },
    { type: 'chooseOption', sessionId: ID, option: 2 },
    { type: 'clarify', sessionId: ID, text: 'Ten units each.' },
    { type: 'redirect', sessionId: ID, text: 'Archive instead.' },
    { type: 'more', sessionId: ID },
    { type: 'execute', sessionId: ID },
    { type: 'openJob', jobId: 'job_0123456789abcdef' },
  ])('accepts %j', (message) => {
    expect(parseCollabMessage(message)).toEqual({ ok: true, message });
  });

  it.each([
    ['an unknown type', { type: 'approveEverything' }],
    ['option 0', { type: 'chooseOption', sessionId: ID, option: 0 }],
    ['option 4 (at most 3 options exist)', { type: 'chooseOption', sessionId: ID, option: 4 }],
    ['a fractional option', { type: 'chooseOption', sessionId: ID, option: 1.5 }],
    ['an empty clarification', { type: 'clarify', sessionId: ID, text: '' }],
    ['a clarification over the limit', { type: 'clarify', sessionId: ID, text: 'x'.repeat(MAX_COLLAB_TEXT + 1) }],
    ['a job id that is a path', { type: 'openJob', jobId: '../../etc' }],
    ['an extra field', { type: 'more', sessionId: ID, force: true }],
    ['not an object', 'more'],
  ])('refuses %s', (_what, message) => {
    expect(parseCollabMessage(message).ok).toBe(false);
  });
});
