/** A unified diff as coloured lines (+ added, - removed, @@ hunks), text only. */
import { el } from '../../common/dom';

export function diffView(diff: string, attrs: Record<string, string> = {}): HTMLElement {
  const lines = diff.replace(/\n$/, '').split('\n');
  return el(
    'pre',
    { class: 'diff', ...attrs },
    ...lines.map((line) => {
      const kind =
        line.startsWith('+++') || line.startsWith('---')
          ? 'diff-file'
          : line.startsWith('@@')
            ? 'diff-hunk'
            : line.startsWith('+')
              ? 'diff-add'
              : line.startsWith('-')
                ? 'diff-del'
                : 'diff-ctx';
      // Screen readers hear what the colour shows.
      const label = kind === 'diff-add' ? 'added: ' : kind === 'diff-del' ? 'removed: ' : '';
      const row = el('span', { class: `diff-line ${kind}` }, line === '' ? ' ' : line);
      if (label) row.prepend(el('span', { class: 'sr-only' }, label));
      return row;
    }),
  );
}
