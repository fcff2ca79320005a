/**
 * A small line diff (longest common subsequence) rendered as unified-diff text, so the review chat can
 * show how a plan changed between two commits without shipping a diff library.
 */

export type DiffOp = { kind: ' ' | '-' | '+'; line: string };

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The edit script from `a` to `b`, line by line. O(n·m) memory: meant for job files, not big dumps. */
export function diffLines(a: string, b: string): DiffOp[] {
  const x = splitLines(a);
  const y = splitLines(b);
  const n = x.length;
  const m = y.length;
  // lcs[i][j] = length of the LCS of x[i..] and y[j..]
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as number[];
    const below = lcs[i + 1] as number[];
    for (let j = m - 1; j >= 0; j--) {
      row[j] = x[i] === y[j] ? (below[j + 1] ?? 0) + 1 : Math.max(below[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const ops: DiffOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      ops.push({ kind: ' ', line: x[i] ?? '' });
      i++;
      j++;
    } else if ((lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0)) {
      ops.push({ kind: '-', line: x[i] ?? '' });
      i++;
    } else {
      ops.push({ kind: '+', line: y[j] ?? '' });
      j++;
    }
  }
  for (; i < n; i++) ops.push({ kind: '-', line: x[i] ?? '' });
  for (; j < m; j++) ops.push({ kind: '+', line: y[j] ?? '' });
  return ops;
}

/** Unified-diff text with `context` lines around each change; '' when the texts are equal. */
export function unifiedDiff(a: string, b: string, labels: { from: string; to: string }, context = 3): string {
  const ops = diffLines(a, b);
  const changed = ops.map((op, k) => (op.kind !== ' ' ? k : -1)).filter((k) => k >= 0);
  if (changed.length === 0) return '';

  // Group changes whose context windows touch into one hunk.
  const hunks: Array<[number, number]> = [];
  for (const k of changed) {
    const start = Math.max(0, k - context);
    const end = Math.min(ops.length, k + context + 1);
    const last = hunks[hunks.length - 1];
    if (last && start <= last[1]) last[1] = end;
    else hunks.push([start, end]);
  }

  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  for (const [start, end] of hunks) {
    let oldLine = 1;
    let newLine = 1;
    for (const op of ops.slice(0, start)) {
      if (op.kind !== '+') oldLine++;
      if (op.kind !== '-') newLine++;
    }
    const body = ops.slice(start, end);
    const oldCount = body.filter((op) => op.kind !== '+').length;
    const newCount = body.filter((op) => op.kind !== '-').length;
    out.push(
      `@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`,
    );
    for (const op of body) out.push(`${op.kind}${op.line}`);
  }
  return `${out.join('\n')}\n`;
}
