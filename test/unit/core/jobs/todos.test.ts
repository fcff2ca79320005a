import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../../../src/core/jobs/lineDiff';
import { findCycle, renderTodos } from '../../../../src/core/jobs/todos';

describe('line diff', () => {
  it('shows only the changed lines with context and hunk positions', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join('\n') + '\n';
    const after = ['a', 'b', 'c', 'd', 'E', 'f', 'g', 'h', 'i', 'j', 'k'].join('\n') + '\n';
    expect(unifiedDiff(before, after, { from: 'a/x', to: 'b/x' }, 1)).toBe(
      ['--- a/x', '+++ b/x', '@@ -4,3 +4,3 @@', ' d', '-e', '+E', ' f', '@@ -10,1 +10,2 @@', ' j', '+k', ''].join('\n'),
    );
    expect(unifiedDiff('same\n', 'same\n', { from: 'a', to: 'b' })).toBe('');
  });
});

describe('todos', () => {
  it('renders an empty list as []', () => {
    expect(renderTodos([])).toBe('[]\n');
  });

  it('finds no cycle in a diamond of dependencies', () => {
    expect(
      findCycle([
        { id: 'a', title: 'A', status: 'pending' },
        { id: 'b', title: 'B', status: 'pending', depends_on: ['a'] },
        { id: 'c', title: 'C', status: 'pending', depends_on: ['a'] },
        { id: 'd', title: 'D', status: 'pending', depends_on: ['b', 'c'] },
      ]),
    ).toBeUndefined();
  });

  it('refuses to render a list with a self-dependency', () => {
    expect(() => renderTodos([{ id: 'a', title: 'A', status: 'pending', depends_on: ['a'] }])).toThrow(
      /dependency cycle: a -> a/,
    );
  });
});
