/**
 * Two processes appending to one database's history at once, with rotation under way: every line is whole
 * (parses), none is lost, none is doubled; the rotated files are the database's and `readHistory` reads them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHistory } from '../../../../src/core/sql/history/readHistory';

const COUNT = 2000;
const dir = mkdtempSync(join(tmpdir(), 'i33b-history-concurrency-'));

function appender(writer: string, go: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      join('node_modules', '.bin', 'vite-node'),
      ['test/support/historyAppender.ts', dir, writer, String(COUNT), String(1024 * 1024), go],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.once('error', reject);
    child.once('close', resolve);
  });
}

describe('query history written by two processes at once', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every line whole, once, across rotations', async () => {
    const go = join(dir, 'go');
    const done = Promise.all([appender('alpha', go), appender('beta', go)]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    writeFileSync(go, '');
    expect(await done).toEqual([0, 0]);
    const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(files.length).toBeGreaterThan(2); // ~12 MB in 1 MiB files: rotated while both wrote
    const lines = files.flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    );
    const parsed = lines.map((l) => JSON.parse(l) as { who: string; sql: string });
    for (const writer of ['alpha', 'beta']) {
      const numbers = parsed.filter((e) => e.who === writer).map((e) => Number(/^SELECT (\d+)/.exec(e.sql)?.[1]));
      expect(numbers.length).toBe(COUNT);
      expect(new Set(numbers).size).toBe(COUNT);
    }
    const read = await readHistory(dir, { db: 'localhost:5432/i33b_concurrency', grep: 'beta' });
    expect(read.length).toBe(COUNT);
  }, 120_000);
});
