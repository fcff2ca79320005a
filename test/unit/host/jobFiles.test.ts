import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSqlFiles, resolveJobFile } from '../../../src/host/jobs/cockpit/jobFiles';

let root: string;
let jobDir: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pgagent-jobfiles-'));
  jobDir = join(root, 'job_0123456789abcdef');
  mkdirSync(join(jobDir, 'sql'), { recursive: true });
  mkdirSync(join(jobDir, '.history'));
  writeFileSync(join(jobDir, 'plan.md'), '# Plan\n');
  writeFileSync(
    join(jobDir, 'sql', '001-restock.sql'),
    'UPDATE products SET stock_quantity = 5 WHERE id IN (1, 2, 3)\n',
  );
  writeFileSync(join(jobDir, 'sql', 'notes.txt'), 'not sql');
  writeFileSync(join(jobDir, '.history', 'config'), '[core]');
  writeFileSync(join(root, 'secret.txt'), 'outside');
  symlinkSync(join(root, 'secret.txt'), join(jobDir, 'sql', 'link.sql'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('resolveJobFile (openJobFile from the panel)', () => {
  it('opens files of the job folder', async () => {
    expect(await resolveJobFile(jobDir, 'plan.md')).toEqual({ ok: true, path: join(jobDir, 'plan.md') });
    expect(await resolveJobFile(jobDir, 'sql/001-restock.sql')).toMatchObject({ ok: true });
  });

  it.each([
    ['an absolute path', '/etc/passwd'],
    ['a climb out of the folder', '../secret.txt'],
    ['a climb hidden in the middle', 'sql/../../secret.txt'],
    ['the job history', '.history/config'],
    ['a link pointing outside', 'sql/link.sql'],
    ['a folder', 'sql'],
    ['a missing file', 'todos.yaml'],
    ['an empty path', ''],
  ])('refuses %s', async (_what, path) => {
    const check = await resolveJobFile(jobDir, path);
    expect(check.ok).toBe(false);
  });
});

describe('readSqlFiles', () => {
  it('reads the .sql files of sql/ and nothing that leaves the folder by a link', async () => {
    const files = await readSqlFiles(jobDir);
    expect([...files.keys()]).toEqual(['sql/001-restock.sql']);
    expect(files.get('sql/001-restock.sql')).toContain('UPDATE products');
  });
});
