/**
 * The job folders under `.pgagent/jobs/` (SPEC §4): creating a job, reading and moving its status, and
 * reading and writing the files inside it without ever touching a path outside the job folder.
 */
import { appendFileSync, lstatSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { JOB_ID_PATTERN } from '../../shared/ids';
import { settled, writeFileAtomic } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';
import { isInside } from '../fs/isInside';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';
import { workspacePaths } from '../config/workspace';
import { passwordsAsVerifiers } from '../sql/secrets/textPasswords';
import type { Job, JobStatus } from './job';
import { assertJobId, newJobId, parseJob, transitionJob } from './job';

export const JOB_SUBFOLDERS = ['tools', 'sql', 'impact', 'undo'] as const;
export type JsonlLog = 'chat.jsonl' | 'audit.jsonl';

const REVIEW_HEADING = '## Review Feedback';

export interface JobStoreOptions {
  logger?: Logger;
  now?: () => Date;
}

export interface NewJob {
  title: string;
  /** A password-free connection key (profile name or user@host:port/db). */
  connection: string;
  threadId?: string;
  /** The task in the person's words, kept under "## Task" in workspace.md. */
  task?: string;
  skipReview?: boolean;
  /** More files of the new folder, such as `tools/<name>.md`, each in one of JOB_SUBFOLDERS. */
  files?: { file: string; text: string }[];
}

/**
 * Small files read again only when their identity changed: files written through writeFileAtomic are
 * replaced whole (a rename: a new inode), so a file with the same inode, size and times holds what was
 * read last time, and a check costs one stat instead of open, read and close. Used for job.json and leases.
 */
export class ReadByIdentity<T> {
  private readonly seen = new Map<string, { stamp: string; value: T }>();

  /** The parsed file, or undefined when it does not exist. */
  read(path: string, parse: (text: string) => T): T | undefined {
    const now = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (now === undefined) return undefined;
    const stamp = `${now.ino}:${now.size}:${now.mtimeNs}:${now.ctimeNs}`;
    const known = this.seen.get(path);
    if (known?.stamp === stamp) return known.value;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined; // removed between the stat and the read
      throw error;
    }
    const value = parse(text);
    this.seen.set(path, { stamp, value });
    return value;
  }
}

function outside(relativePath: string, why: string): AgentError {
  return new AgentError(
    'BAD_INPUT',
    `"${relativePath.slice(0, 120)}" is not a file of this job: ${why}.`,
    'Use a path relative to the job folder, such as plan.md or sql/001-add-index.sql.',
  );
}

export class JobStore {
  readonly root: string;
  private readonly logger: Logger;
  private readonly now: () => Date;
  /** Real paths of job folders already resolved: a job folder is never moved while its job exists. */
  private readonly realDirs = new Map<string, string>();
  /** job.json of each job, read again only when it changed. */
  private readonly jobs = new ReadByIdentity<Job>();

  constructor(workspaceDir: string, options: JobStoreOptions = {}) {
    this.root = workspacePaths(workspaceDir).jobs;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
  }

  /** The folder of a job; the id is checked before any path is built from it. */
  jobDir(id: string): string {
    assertJobId(id);
    return join(this.root, id);
  }

  async create(input: NewJob): Promise<Job> {
    // A job's title and task are kept in its files: a password typed in them is kept as its verifier.
    const title = passwordsAsVerifiers(input.title.trim());
    const task = passwordsAsVerifiers(input.task?.trim() ?? '');
    if (title === '') throw new AgentError('BAD_INPUT', 'A job needs a title.', 'Describe the task in a few words.');
    const id = newJobId();
    const dir = this.jobDir(id);
    const at = this.now().toISOString();
    const job = parseJob(
      JSON.stringify({
        id,
        title,
        status: 'planning',
        phase: 'strategic',
        reviewCycles: 0,
        createdAt: at,
        updatedAt: at,
        connection: input.connection,
        ...(input.threadId ? { threadId: input.threadId } : {}),
        ...(input.skipReview ? { skipReview: true } : {}),
      }),
      'the new job',
    );
    const files = [
      { file: 'workspace.md', text: `# ${title}\n\n## Task\n\n${task ? `${task}\n` : ''}` },
      { file: 'plan.md', text: '# Plan\n' },
      { file: 'todos.yaml', text: '[]\n' },
      { file: 'chat.jsonl', text: '' },
      { file: 'audit.jsonl', text: '' },
      ...(input.files ?? []),
    ];
    for (const { file } of input.files ?? []) {
      if (!new RegExp(`^(${JOB_SUBFOLDERS.join('|')})/[\\w.-]+$`).test(file) || file.includes('..'))
        throw outside(file, 'a new job only gets files in its subfolders');
    }
    mkdirSync(this.root, { recursive: true });
    mkdirSync(dir); // fails if the id already exists rather than mixing two jobs
    for (const sub of JOB_SUBFOLDERS) mkdirSync(join(dir, sub));
    // Plain writes: nobody reads a folder without job.json, which comes last.
    for (const { file, text } of files) writeFileSync(join(dir, file), text, 'utf8');
    await this.saveJob(job); // job.json last: a folder without it is an unfinished create, not a job
    this.logger.info('job created', { jobId: id });
    return job;
  }

  get(id: string): Promise<Job> {
    return settled(() => this.readJob(id));
  }

  private readJob(id: string): Job {
    const path = join(this.jobDir(id), 'job.json');
    const job = this.jobs.read(path, (text) => this.checkedJob(id, text, path));
    if (!job)
      throw new AgentError('BAD_INPUT', `There is no job ${id} in this workspace.`, 'List the jobs to see their ids.');
    return { ...job };
  }

  private checkedJob(id: string, text: string, path: string): Job {
    const job = parseJob(text, path);
    if (job.id !== id)
      throw new AgentError(
        'CONFIG_INVALID',
        `job.json of ${id} names another job (${job.id}).`,
        'Restore the file from the job history.',
      );
    return job;
  }

  /** Every readable job, newest first; folders that are not jobs are skipped with a warning. */
  async list(): Promise<Job[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return [];
      throw error;
    }
    const jobs: Job[] = [];
    for (const name of names) {
      if (!JOB_ID_PATTERN.test(name)) continue;
      try {
        jobs.push(await this.get(name));
      } catch (error) {
        this.logger.warn('skipping unreadable job folder', {
          jobId: name,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return jobs.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  }

  /** Moves a job to `to` if the transition table allows it, and records the move in audit.jsonl. */
  async setStatus(id: string, to: JobStatus, reason: string): Promise<Job> {
    const job = await this.get(id);
    const now = this.now();
    const next = transitionJob(job, to, now);
    await this.saveJob(next);
    await this.appendJsonl(id, 'audit.jsonl', { type: 'status', at: now.toISOString(), from: job.status, to, reason });
    this.logger.info('job status changed', { jobId: id, from: job.status, to });
    return next;
  }

  /** Changes fields that are not the status (which only moves through setStatus). */
  async update(id: string, patch: { phase?: Job['phase']; skipReview?: boolean }): Promise<Job> {
    const job = await this.get(id);
    const next: Job = { ...job, ...patch, updatedAt: this.now().toISOString() };
    await this.saveJob(next);
    return next;
  }

  /** Whether the job has this file (a missing file is not an error; an unreadable one is). */
  hasFile(id: string, relativePath: string): Promise<boolean> {
    return settled(() => lstatSync(this.confined(id, relativePath), { throwIfNoEntry: false }) !== undefined);
  }

  readFile(id: string, relativePath: string): Promise<string> {
    return settled(() => {
      const path = this.confined(id, relativePath);
      let real: string;
      try {
        real = realpathSync(path);
      } catch (error) {
        if (isErrno(error, 'ENOENT'))
          throw new AgentError('BAD_INPUT', `Job ${id} has no file ${relativePath}.`, undefined, { cause: error });
        throw error;
      }
      if (!isInside(this.realJobDir(id), real)) throw outside(relativePath, 'it links outside the job folder');
      return readFileSync(real, 'utf8');
    });
  }

  async writeFile(id: string, relativePath: string, text: string): Promise<void> {
    const path = this.confined(id, relativePath, { createParent: true });
    const existing = lstatSync(path, { throwIfNoEntry: false });
    if (existing?.isSymbolicLink()) throw outside(relativePath, 'it is a symbolic link');
    if (existing?.isDirectory()) throw outside(relativePath, 'it is a folder');
    await writeFileAtomic(path, text);
  }

  appendJsonl(id: string, log: JsonlLog, record: Record<string, unknown>): Promise<void> {
    return settled(() => {
      if (log !== 'chat.jsonl' && log !== 'audit.jsonl')
        throw new AgentError('BAD_INPUT', `"${String(log)}" is not a log of a job.`);
      appendFileSync(join(this.jobDir(id), log), `${JSON.stringify(record)}\n`, 'utf8');
    });
  }

  /**
   * Adds a dated entry to the `## Review Feedback` section of workspace.md (created once, at the end),
   * keeping entries in order and before any later section.
   */
  async appendReviewFeedback(id: string, feedback: string, now: Date = this.now()): Promise<void> {
    const text = feedback.trim();
    if (text === '')
      throw new AgentError('BAD_INPUT', 'Review feedback is empty.', 'Write what should change in the plan.');
    const path = join(this.jobDir(id), 'workspace.md');
    let doc = readFileSync(path, 'utf8');
    const entry = `### ${now.toISOString()}\n\n${text}\n\n`;
    const lines = doc.split('\n');
    const start = lines.findIndex((line) => line.trimEnd() === REVIEW_HEADING);
    if (start === -1) {
      doc = `${doc.replace(/\n*$/, '\n')}\n${REVIEW_HEADING}\n\n${entry}`;
    } else {
      const nextOffset = lines.slice(start + 1).findIndex((line) => /^#{1,2} /.test(line));
      if (nextOffset === -1) {
        doc = `${doc.replace(/\n*$/, '\n')}\n${entry}`;
      } else {
        const end = start + 1 + nextOffset;
        const before = lines.slice(0, end).join('\n').replace(/\n*$/, '\n');
        doc = `${before}\n${entry}${lines.slice(end).join('\n')}`;
      }
    }
    await writeFileAtomic(path, doc.replace(/\n*$/, '\n'));
  }

  /** The next free `sql/NNN-<slug>.sql` path (relative to the job folder); the file is not created. */
  async nextSqlFile(id: string, slug: string): Promise<string> {
    const clean =
      slug
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 50)
        .replace(/-+$/, '') || 'query';
    const names = await readdir(join(this.jobDir(id), 'sql')).catch((error: unknown) => {
      if (isErrno(error, 'ENOENT')) return [] as string[];
      throw error;
    });
    const highest = names.reduce((max, name) => {
      const match = /^(\d{3,})-/.exec(name);
      return match?.[1] ? Math.max(max, Number(match[1])) : max;
    }, 0);
    return `sql/${String(highest + 1).padStart(3, '0')}-${clean}.sql`;
  }

  private async saveJob(job: Job): Promise<void> {
    await writeFileAtomic(join(this.jobDir(job.id), 'job.json'), `${JSON.stringify(job, null, 2)}\n`);
  }

  private realJobDir(id: string): string {
    const known = this.realDirs.get(id);
    if (known !== undefined) return known;
    try {
      const real = realpathSync(this.jobDir(id));
      this.realDirs.set(id, real);
      return real;
    } catch (error) {
      if (isErrno(error, 'ENOENT'))
        throw new AgentError(
          'BAD_INPUT',
          `There is no job ${id} in this workspace.`,
          'List the jobs to see their ids.',
          { cause: error },
        );
      throw error;
    }
  }

  /**
   * The absolute path of a file inside the job folder. Refuses absolute paths, `..`, the job's own
   * history, and any parent folder whose real path (symlinks resolved) leaves the job folder.
   */
  private confined(id: string, relativePath: string, options: { createParent?: boolean } = {}): string {
    const dir = this.jobDir(id);
    if (relativePath.trim() === '' || relativePath.includes('\0')) throw outside(relativePath, 'the path is empty');
    if (isAbsolute(relativePath) || /^[a-zA-Z]:/.test(relativePath))
      throw outside(relativePath, 'the path is absolute');
    const parts = relativePath.split(/[\\/]+/);
    if (parts.includes('..')) throw outside(relativePath, 'the path climbs out with ".."');
    const clean = normalize(relativePath);
    if (clean.split(sep)[0] === '.history') throw outside(relativePath, 'the job history is managed by git');
    const path = join(dir, clean);
    if (path === dir) throw outside(relativePath, 'that is the job folder itself');

    const realDir = this.realJobDir(id);
    // Check the nearest existing ancestor before creating anything, so mkdir never follows a link outside.
    let ancestor = dirname(path);
    for (;;) {
      try {
        const real = ancestor === dir ? realDir : realpathSync(ancestor);
        if (!isInside(realDir, real)) throw outside(relativePath, 'a folder on the way links outside the job folder');
        break;
      } catch (error) {
        if (!isErrno(error, 'ENOENT')) throw error;
        if (ancestor === dir) {
          this.realDirs.delete(id);
          throw new AgentError(
            'BAD_INPUT',
            `There is no job ${id} in this workspace.`,
            'List the jobs to see their ids.',
            { cause: error },
          );
        }
        ancestor = dirname(ancestor);
      }
    }
    if (ancestor === dirname(path)) return path; // the file's own folder exists and was just checked
    if (!options.createParent) throw new AgentError('BAD_INPUT', `Job ${id} has no file ${relativePath}.`);
    mkdirSync(dirname(path), { recursive: true });
    const realParent = realpathSync(dirname(path));
    if (!isInside(realDir, realParent)) throw outside(relativePath, 'its folder links outside the job folder');
    return path;
  }
}
