/**
 * The session folders under `.pgagent/collab/` (SPEC §4): session-state.json, context.json,
 * rounds/N/synthesis.json, IMPL_PLAN.md, plan.json and audit.jsonl. Every write is atomic (the jobs'
 * writeFileAtomic) and every path is built from a checked id and a fixed name, inside the session folder.
 */
import { appendFile, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AgentError } from '../platform/errors';
import { isInside } from '../fs/isInside';
import { writeFileAtomic } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';
import { namesIn } from '../fs/listDir';
import { processAlive } from '../fs/processAlive';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';
import type { SessionState, Synthesis } from './sessionTypes';
import { assertSessionId, parseSessionFile, sessionStateSchema, synthesisSchema } from './sessionTypes';
import { SESSION_ID_PATTERN } from '../../shared/ids';
import { workspacePaths } from '../config/workspace';

/** The files a session may hold besides its rounds. */
export type SessionFile =
  'session-state.json' | 'context.json' | 'IMPL_PLAN.md' | 'plan.json' | 'audit.jsonl' | 'run.lock';

export class CollabStore {
  readonly root: string;
  private readonly logger: Logger;

  constructor(workspaceDir: string, options: { logger?: Logger } = {}) {
    this.root = workspacePaths(workspaceDir).collab;
    this.logger = options.logger ?? silentLogger;
  }

  sessionDir(id: string): string {
    assertSessionId(id);
    return join(this.root, id);
  }

  /** Creates the folder and writes the first state; fails rather than mixing two sessions under one id. */
  async create(state: SessionState): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await mkdir(this.sessionDir(state.id));
    await mkdir(join(this.sessionDir(state.id), 'rounds'));
    await appendFile(join(this.sessionDir(state.id), 'audit.jsonl'), '');
    await this.saveState(state);
    this.logger.info('planning session created', { sessionId: state.id });
  }

  async get(id: string): Promise<SessionState> {
    await this.confine(id, 'session-state.json');
    let text: string;
    try {
      text = await readFile(join(this.sessionDir(id), 'session-state.json'), 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT'))
        throw new AgentError(
          'BAD_INPUT',
          `There is no planning session ${id} in this workspace.`,
          'List them with pg-agent plan list.',
          { cause: error },
        );
      throw error;
    }
    const state = parseSessionFile(text, sessionStateSchema, `session-state.json of ${id}`);
    if (state.id !== id)
      throw new AgentError('CONFIG_INVALID', `session-state.json of ${id} names another session (${state.id}).`);
    return state;
  }

  /** Every readable session, newest first; unreadable folders are skipped with a warning. */
  async list(): Promise<SessionState[]> {
    const names = await namesIn(this.root);
    const sessions: SessionState[] = [];
    for (const name of names.filter((n) => SESSION_ID_PATTERN.test(n))) {
      try {
        sessions.push(await this.get(name));
      } catch (error) {
        this.logger.warn('skipping unreadable planning session', {
          sessionId: name,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return sessions.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  }

  async saveState(state: SessionState): Promise<void> {
    const checked = sessionStateSchema.parse(state);
    await this.writeText(state.id, 'session-state.json', `${JSON.stringify(checked, null, 2)}\n`);
  }

  async writeSynthesis(synthesis: Synthesis): Promise<void> {
    const checked = synthesisSchema.parse(synthesis);
    const dir = join(this.sessionDir(synthesis.sessionId), 'rounds', String(synthesis.round));
    await this.confine(synthesis.sessionId, join('rounds', String(synthesis.round)));
    await mkdir(dir, { recursive: true });
    await writeFileAtomic(join(dir, 'synthesis.json'), `${JSON.stringify(checked, null, 2)}\n`);
  }

  async readSynthesis(id: string, round: number): Promise<Synthesis> {
    if (!Number.isSafeInteger(round) || round < 1)
      throw new AgentError('BAD_INPUT', `Round ${round} is not a round number.`);
    const path = join(this.sessionDir(id), 'rounds', String(round), 'synthesis.json');
    await this.confine(id, join('rounds', String(round), 'synthesis.json'));
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT'))
        throw new AgentError('BAD_INPUT', `Session ${id} has no round ${round}.`, undefined, { cause: error });
      throw error;
    }
    return parseSessionFile(text, synthesisSchema, `rounds/${round}/synthesis.json of ${id}`);
  }

  async writeText(id: string, file: SessionFile, text: string): Promise<void> {
    await this.confine(id, file);
    await writeFileAtomic(join(this.sessionDir(id), file), text);
  }

  async readText(id: string, file: SessionFile): Promise<string> {
    await this.confine(id, file);
    try {
      return await readFile(join(this.sessionDir(id), file), 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT'))
        throw new AgentError('BAD_INPUT', `Session ${id} has no ${file}.`, undefined, { cause: error });
      throw error;
    }
  }

  /** Appends one record to audit.jsonl (append-only, like a job's audit). */
  async audit(id: string, record: Record<string, unknown>): Promise<void> {
    await this.confine(id, 'audit.jsonl');
    await appendFile(
      join(this.sessionDir(id), 'audit.jsonl'),
      `${JSON.stringify({ at: new Date().toISOString(), ...record })}\n`,
      'utf8',
    );
  }

  /**
   * One driver at a time: a step holds run.lock (created exclusively) while it changes the session. A lock
   * left by a process of this machine that no longer exists is taken over; any other lock refuses the step.
   * Returns the release.
   */
  async lock(id: string, what: string): Promise<() => Promise<void>> {
    await this.confine(id, 'run.lock');
    const path = join(this.sessionDir(id), 'run.lock');
    const mine = JSON.stringify({ pid: process.pid, host: hostname(), what, at: new Date().toISOString() });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(path, mine, { flag: 'wx' });
        return () => rm(path, { force: true });
      } catch (error) {
        if (!isErrno(error, 'EEXIST')) throw error;
        const text = await readFile(path, 'utf8').catch((e: unknown) => {
          if (isErrno(e, 'ENOENT')) return null; // released meanwhile: try again
          throw e;
        });
        if (text === null) continue;
        const holder = lockHolder(text);
        if (holder.host === hostname() && typeof holder.pid === 'number' && !processAlive(holder.pid)) {
          this.logger.warn('taking over the lock of a process that ended', { sessionId: id, pid: holder.pid });
          await rm(path, { force: true });
          continue;
        }
        throw new AgentError(
          'BAD_INPUT',
          `Session ${id} is busy: ${holder.what ?? 'a step'} runs in process ${holder.pid ?? '?'} on ${holder.host ?? '?'} since ${holder.at ?? '?'}.`,
          'Wait for it to finish (pg-agent plan show shows where it stands), or stop that process.',
        );
      }
    }
    throw new AgentError('BAD_INPUT', `Session ${id} is busy.`, 'Try again in a moment.');
  }

  /** Refuses a session folder (or a file's folder) whose real path leaves .pgagent/collab (a planted symlink). */
  private async confine(id: string, relative: string): Promise<void> {
    const dir = this.sessionDir(id);
    let realRoot: string;
    let realDir: string;
    try {
      [realRoot, realDir] = await Promise.all([realpath(this.root), realpath(dir)]);
    } catch (error) {
      if (isErrno(error, 'ENOENT'))
        throw new AgentError(
          'BAD_INPUT',
          `There is no planning session ${id} in this workspace.`,
          'List them with pg-agent plan list.',
          { cause: error },
        );
      throw error;
    }
    if (!isInside(realRoot, realDir) || realDir === realRoot)
      throw outside(id, 'the session folder links outside .pgagent/collab');
    const target = join(dir, relative);
    const real = await realpath(target).catch((error: unknown) => {
      if (isErrno(error, 'ENOENT')) return undefined;
      throw error;
    });
    if (real !== undefined && !isInside(realDir, real))
      throw outside(id, `${relative} links outside the session folder`);
  }
}

interface LockHolder {
  pid?: number;
  host?: string;
  what?: string;
  at?: string;
}

/** The lock file's holder; a lock being written (not JSON yet) names nobody, and counts as busy. */
function lockHolder(text: string): LockHolder {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {};
  }
}

function outside(id: string, why: string): AgentError {
  return new AgentError(
    'BAD_INPUT',
    `Session ${id} cannot be used: ${why}.`,
    'Remove the link and start a new session.',
  );
}
