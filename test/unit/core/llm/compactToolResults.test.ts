import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../../src/core/llm/provider';
import { compactToolResults, SPENT_RESULT_CHARS } from '../../../../src/core/jobs/phases/jobState';

describe('compactToolResults (rows kept out of later checkpoints)', () => {
  const rows = `<untrusted-data>\n${'["1","alice@example.com","cancelled"]\n'.repeat(200)}</untrusted-data>`;
  const conversation: ChatMessage[] = [
    { role: 'user', content: `The task:\n${'x'.repeat(2000)}` },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'sample_rows', args: { table: 'orders' } }] },
    { role: 'tool', name: 'sample_rows', toolCallId: 'c1', content: rows },
    { role: 'tool', name: 'count_rows', toolCallId: 'c2', content: '{"count": 40}' },
  ];

  it('cuts long tool results to their beginning with a note, and leaves everything else as it was', () => {
    const compacted = compactToolResults(conversation);
    expect(compacted[0]).toBe(conversation[0]); // the person's words are never cut
    expect(compacted[1]).toBe(conversation[1]);
    expect(compacted[3]).toBe(conversation[3]); // short results stay whole
    const cut = compacted[2];
    expect(cut?.role).toBe('tool');
    expect(cut?.content.startsWith(rows.slice(0, SPENT_RESULT_CHARS))).toBe(true);
    expect(cut?.content).toContain(`${rows.length - SPENT_RESULT_CHARS} more characters of this result were dropped`);
    expect(cut?.content.length).toBeLessThan(SPENT_RESULT_CHARS + 200);
    expect(compactToolResults(compacted)).toEqual(compacted); // a second boundary changes nothing more
  });
});
