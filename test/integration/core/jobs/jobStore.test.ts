import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fs from 'node:fs';
import git from 'isomorphic-git';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../../../src/core/platform/errors';
import { assertTransition, jobSchema } from '../../../../src/core/jobs/job';
import { JOB_ID_PATTERN } from '../../../../src/shared/ids';
import { commitAll, diff, initHistory, log, show } from '../../../../src/core/jobs/jobHistory';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import { parseTodos, renderTodos } from '../../../../src/core/jobs/todos';
import type { Todo } from '../../../../src/core/jobs/todos';

let workspace: string;
let outsideDir: string;
let clock: number;
let store: JobStore;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'pgagent-jobs-'));
  outsideDir = mkdtempSync(join(tmpdir(), 'pgagent-outside-'));
  writeFileSync(join(outsideDir, 'secret.txt'), 'not yours\n');
  clock = Date.parse('2026-01-01T10:00:00Z');
  store = new JobStore(workspace, { now: () => new Date((clock += 1000)) });
});

afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(outsideDir, { recursive: true, force: true });
});

async function expectAgentError(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentError);
  expect((error as AgentError).code).toBe(code);
  expect((error as AgentError).message).toMatch(message);
}

describe('job store', () => {
  it('creates the job folder layout with a valid job.json', async () => {
    const job = await store.create({ title: 'Add an index on users.email', connection: 'app@localhost:5432/shop' });
    expect(job.id).toMatch(JOB_ID_PATTERN);
    const dir = join(workspace, '.pgagent', 'jobs', job.id);
    expect(readdirSync(dir).sort()).toEqual(
      [
        'audit.jsonl',
        'chat.jsonl',
        'impact',
        'job.json',
        'plan.md',
        'sql',
        'todos.yaml',
        'tools',
        'undo',
        'workspace.md',
      ].sort(),
    );
    for (const sub of ['tools', 'sql', 'impact', 'undo']) expect(statSync(join(dir, sub)).isDirectory()).toBe(true);
    const onDisk = jobSchema.parse(JSON.parse(readFileSync(join(dir, 'job.json'), 'utf8')));
    expect(onDisk).toMatchObject({
      id: job.id,
      title: 'Add an index on users.email',
      status: 'planning',
      phase: 'strategic',
      reviewCycles: 0,
    });
    expect(readFileSync(join(dir, 'workspace.md'), 'utf8')).toMatch(/^# Add an index on users\.email\n\n## Task\n/);
    expect(readFileSync(join(dir, 'todos.yaml'), 'utf8')).toBe('[]\n');
    expect(parseTodos(readFileSync(join(dir, 'todos.yaml'), 'utf8'))).toEqual([]);
    expect(readFileSync(join(dir, 'chat.jsonl'), 'utf8')).toBe('');
    expect(await store.get(job.id)).toEqual(job);
  });

  it('refuses a connection key holding a password', async () => {
    await expectAgentError(
      store.create({ title: 't', connection: 'postgres://app:hunter2@localhost/shop' }),
      'CONFIG_INVALID',
      /connection.*password/,
    );
  });

  it('lists jobs newest first', async () => {
    const first = await store.create({ title: 'first', connection: 'local' });
    const second = await store.create({ title: 'second', connection: 'local' });
    const third = await store.create({ title: 'third', connection: 'local' });
    expect((await store.list()).map((j) => j.id)).toEqual([third.id, second.id, first.id]);
  });

  it('refuses malformed ids before building a path', async () => {
    await expectAgentError(store.get('../../etc'), 'BAD_INPUT', /not a job id/);
    await expectAgentError(store.readFile('job_../x', 'plan.md'), 'BAD_INPUT', /not a job id/);
  });

  it('moves through allowed transitions and records them', async () => {
    const job = await store.create({ title: 't', connection: 'local' });
    const review = await store.setStatus(job.id, 'pending_review', 'plan ready');
    expect(review.reviewCycles).toBe(1);
    await store.setStatus(job.id, 'planning', 'changes requested');
    await store.setStatus(job.id, 'pending_review', 'plan revised');
    const running = await store.setStatus(job.id, 'running', 'approved');
    expect(running.reviewCycles).toBe(2);
    expect(running.updatedAt > job.updatedAt).toBe(true);
    const done = await store.setStatus(job.id, 'completed', 'all todos done');
    expect((await store.get(job.id)).status).toBe('completed');
    expect(done.status).toBe('completed');
    const audit = (await store.readFile(job.id, 'audit.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { to: string; reason: string });
    expect(audit.map((a) => a.to)).toEqual(['pending_review', 'planning', 'pending_review', 'running', 'completed']);
    expect(audit[1]?.reason).toBe('changes requested');
  });

  it('refuses transitions out of terminal states and skipped steps, naming both states', async () => {
    const job = await store.create({ title: 't', connection: 'local' });
    await store.setStatus(job.id, 'pending_review', 'plan ready');
    // A plan under review cannot be completed without being approved and run first.
    await expectAgentError(
      store.setStatus(job.id, 'completed', 'skip execution'),
      'BAD_INPUT',
      /from "pending_review" to "completed"/,
    );
    await store.setStatus(job.id, 'cancelled', 'not needed');
    for (const to of ['planning', 'running', 'frozen'] as const) {
      await expectAgentError(
        store.setStatus(job.id, to, 'revive'),
        'BAD_INPUT',
        new RegExp(`from "cancelled" to "${to}"`),
      );
    }
    expect(() => assertTransition('failed', 'planning')).toThrow(/final|from "failed" to "planning"/);
  });

  it('thaws a frozen job only back to the status it was frozen from', async () => {
    const job = await store.create({ title: 't', connection: 'local' });
    await store.setStatus(job.id, 'pending_review', 'plan ready');
    const frozen = await store.setStatus(job.id, 'frozen', 'owner on holiday');
    expect(frozen.frozenFrom).toBe('pending_review');
    await expectAgentError(
      store.setStatus(job.id, 'running', 'sneak past review'),
      'BAD_INPUT',
      /from "frozen" to "running".*"pending_review"/,
    );
    const thawed = await store.setStatus(job.id, 'pending_review', 'back');
    expect(thawed.status).toBe('pending_review');
    expect(thawed.frozenFrom).toBeUndefined();
    expect(thawed.reviewCycles).toBe(1);
    expect(JSON.parse(readFileSync(join(store.jobDir(job.id), 'job.json'), 'utf8'))).not.toHaveProperty('frozenFrom');
  });

  it('reads and writes files inside the job folder, refusing paths that leave it', async () => {
    const job = await store.create({ title: 't', connection: 'local' });
    await store.writeFile(job.id, 'tools/run_sql.md', '# run_sql\n');
    expect(await store.readFile(job.id, 'tools/run_sql.md')).toBe('# run_sql\n');

    await expectAgentError(store.readFile(job.id, '../../config.json'), 'BAD_INPUT', /"\.\."/);
    await expectAgentError(store.writeFile(job.id, 'sql/../../escape.txt', 'x'), 'BAD_INPUT', /"\.\."/);
    await expectAgentError(store.readFile(job.id, join(outsideDir, 'secret.txt')), 'BAD_INPUT', /absolute/);
    await expectAgentError(store.writeFile(job.id, join(outsideDir, 'new.txt'), 'x'), 'BAD_INPUT', /absolute/);
    await expectAgentError(store.writeFile(job.id, '.history/config', 'x'), 'BAD_INPUT', /history/);

    const dir = store.jobDir(job.id);
    symlinkSync(outsideDir, join(dir, 'linked'));
    symlinkSync(join(outsideDir, 'secret.txt'), join(dir, 'secret-link.txt'));
    await expectAgentError(store.readFile(job.id, 'linked/secret.txt'), 'BAD_INPUT', /outside/);
    await expectAgentError(store.writeFile(job.id, 'linked/new.txt', 'x'), 'BAD_INPUT', /outside/);
    await expectAgentError(store.writeFile(job.id, 'linked/deeper/new.txt', 'x'), 'BAD_INPUT', /outside/);
    await expectAgentError(store.readFile(job.id, 'secret-link.txt'), 'BAD_INPUT', /outside/);
    await expectAgentError(store.writeFile(job.id, 'secret-link.txt', 'x'), 'BAD_INPUT', /symbolic link/);
    expect(existsSync(join(outsideDir, 'new.txt'))).toBe(false);
    expect(existsSync(join(outsideDir, 'deeper'))).toBe(false);
    expect(readFileSync(join(outsideDir, 'secret.txt'), 'utf8')).toBe('not yours\n');
  });

  it('appends review feedback as dated entries under one section', async () => {
    const job = await store.create({ title: 'Tune slow report', connection: 'local' });
    await store.appendReviewFeedback(job.id, 'Do not touch the orders table.', new Date('2026-02-01T09:00:00Z'));
    await store.appendReviewFeedback(job.id, 'Add an undo script for each step.', new Date('2026-02-02T09:30:00Z'));
    const text = await store.readFile(job.id, 'workspace.md');
    expect(text.match(/^## Review Feedback$/gm)).toHaveLength(1);
    expect(text).toMatch(/^## Task\n/m);
    const first = text.indexOf('### 2026-02-01T09:00:00.000Z\n\nDo not touch the orders table.');
    const second = text.indexOf('### 2026-02-02T09:30:00.000Z\n\nAdd an undo script for each step.');
    expect(first).toBeGreaterThan(text.indexOf('## Review Feedback'));
    expect(second).toBeGreaterThan(first);
  });

  it('numbers sql files', async () => {
    const job = await store.create({ title: 't', connection: 'local' });
    expect(await store.nextSqlFile(job.id, 'Add index on users(email)')).toBe('sql/001-add-index-on-users-email.sql');
    await store.writeFile(job.id, 'sql/001-add-index.sql', 'select 1;\n');
    await store.writeFile(job.id, 'sql/009-vacuum.sql', 'select 1;\n');
    expect(await store.nextSqlFile(job.id, '../../etc')).toBe('sql/010-etc.sql');
  });
});

describe('todos.yaml', () => {
  const todos: Todo[] = [
    { id: 'inspect', title: 'Inspect the slow query: EXPLAIN it', status: 'done' },
    {
      id: 'index',
      title: 'Add an index',
      status: 'pending',
      sql: 'CREATE INDEX CONCURRENTLY users_email_idx\n  ON users (email);',
      depends_on: ['inspect'],
    },
  ];

  it('round-trips through stable, readable YAML', () => {
    const text = renderTodos(todos);
    expect(text).toContain('- id: inspect\n  title: "Inspect the slow query: EXPLAIN it"\n  status: done\n');
    expect(text).toContain('  sql: |-\n    CREATE INDEX CONCURRENTLY users_email_idx\n      ON users (email);');
    expect(parseTodos(text)).toEqual(todos);
    expect(renderTodos(parseTodos(text))).toBe(text);
  });

  it('refuses duplicate ids, unknown dependencies and cycles with the line and field', () => {
    expect(() => parseTodos('- id: a\n  title: A\n  status: done\n- id: a\n  title: B\n  status: pending\n')).toThrow(
      /line 4, todo 2, field id: duplicate id "a"/,
    );
    expect(() => parseTodos('- id: a\n  title: A\n  status: pending\n  depends_on: [ghost]\n')).toThrow(
      /line 4, todo 1, field depends_on: "a" depends on unknown todo "ghost"/,
    );
    expect(() =>
      parseTodos(
        '- id: a\n  title: A\n  status: pending\n  depends_on: [b]\n- id: b\n  title: B\n  status: pending\n  depends_on: [a]\n',
      ),
    ).toThrow(/dependency cycle: a -> b -> a/);
    expect(() => parseTodos('- id: a\n  title: A\n  status: finished\n')).toThrow(/line 3, todo 1, field status/);
    expect(() => parseTodos('- id: a\n  title: [unclosed\n')).toThrow(/todos\.yaml line \d+/);
  });
});

describe('job history', () => {
  it('versions the job folder in its own git history', async () => {
    const job = await store.create({ title: 'Tune slow report', connection: 'local' });
    const dir = store.jobDir(job.id);
    await initHistory(dir);
    const first = await commitAll(dir, 'job created');
    await store.writeFile(job.id, 'plan.md', '# Plan\n\n1. Inspect the query\n2. Add an index\n');
    const second = await commitAll(dir, 'strategic plan');
    expect(second).not.toBe(first);

    const entries = await log(dir, { limit: 10 });
    expect(entries.map((e) => e.message)).toEqual(['strategic plan', 'job created']);
    expect(entries[0]?.oid).toBe(second);
    expect(entries[0]?.time).toBeInstanceOf(Date);

    const patch = await diff(dir, first, second, 'plan.md');
    expect(patch).toContain('+1. Inspect the query\n+2. Add an index\n');
    expect(patch).toMatch(/^--- a\/plan\.md/m);
    expect(patch).not.toMatch(/^-# Plan/m);
    expect(await show(dir, first, 'plan.md')).toBe('# Plan\n');
    expect(await show(dir, second, 'plan.md')).toContain('Add an index');

    expect(await commitAll(dir, 'nothing changed')).toBe(second);
    expect(await log(dir)).toHaveLength(2);

    const tracked = await git.listFiles({ fs, dir, gitdir: join(dir, '.history'), ref: second });
    expect(tracked).toContain('plan.md');
    expect(tracked).toContain('job.json');
    expect(tracked.filter((f) => f.startsWith('.history'))).toEqual([]);
    await expectAgentError(show(dir, first, '.history/config'), 'BAD_INPUT', /did not exist/);
    await expectAgentError(show(dir, second, '.history/HEAD'), 'BAD_INPUT', /did not exist/);
  });

  it('writes a history that real git accepts, leaving out hidden files and symbolic links', async () => {
    const job = await store.create({ title: 'fsck', connection: 'local' });
    const dir = store.jobDir(job.id);
    await initHistory(dir);
    await store.writeFile(job.id, 'sql/001-a.sql', 'select 1;\n');
    writeFileSync(join(dir, '.0123456789ab.tmp'), 'half a write');
    fs.mkdirSync(join(dir, '.index'));
    writeFileSync(join(dir, '.index', 'vectors.json'), '[]');
    symlinkSync(join(outsideDir, 'secret.txt'), join(dir, 'sql', 'link.sql'));
    const first = await commitAll(dir, 'first');
    await store.writeFile(job.id, 'plan.md', '# Plan\n\n1. Changed\n');
    const second = await commitAll(dir, 'second');

    const gitdir = join(dir, '.history');
    const fsck = spawnSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { encoding: 'utf8' });
    expect(fsck.stderr + fsck.stdout).toBe('');
    expect(fsck.status).toBe(0);
    const gitLog = spawnSync('git', ['--git-dir', gitdir, 'log', '--format=%H %s'], { encoding: 'utf8' });
    expect(gitLog.stdout.trim().split('\n')).toEqual([`${second} second`, `${first} first`]);
    const tree = spawnSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', '--name-only', second], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n');
    expect(tree).toContain('sql/001-a.sql');
    expect(tree).toContain('job.json');
    expect(tree.filter((path) => path.startsWith('.') || path.includes('/.') || path.endsWith('link.sql'))).toEqual([]);
    expect(spawnSync('git', ['--git-dir', gitdir, 'show', `${second}:plan.md`], { encoding: 'utf8' }).stdout).toBe(
      '# Plan\n\n1. Changed\n',
    );
  });

  it('records deleted files', async () => {
    const job = await store.create({ title: 't', connection: 'local' });
    const dir = store.jobDir(job.id);
    await initHistory(dir);
    await store.writeFile(job.id, 'sql/001-a.sql', 'select 1;\n');
    const before = await commitAll(dir, 'add sql');
    rmSync(join(dir, 'sql', '001-a.sql'));
    const after = await commitAll(dir, 'drop sql');
    expect(after).not.toBe(before);
    expect(await show(dir, before, 'sql/001-a.sql')).toBe('select 1;\n');
    await expectAgentError(show(dir, after, 'sql/001-a.sql'), 'BAD_INPUT', /did not exist/);
    expect(await diff(dir, before, after, 'sql/001-a.sql')).toContain('-select 1;');
  });
});
