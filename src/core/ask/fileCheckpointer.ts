/**
 * LangGraph checkpoints as JSON files, so an ask run held for approval can be resumed by a new process:
 * `<dir>/<thread>/<checkpoint id>.json` holds the checkpoint, its metadata and parent; the writes of its
 * tasks go to `<checkpoint id>.writes.json`. Every file is written to a temp name and renamed (atomic).
 * Only the root namespace is used by the ask graph; other namespaces get their own subfolder.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '../platform/errors';
import { writeFileAtomicSync } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';
import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import {
  BaseCheckpointSaver,
  INTERRUPT,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';

interface Blob {
  type: string;
  /** base64 of the serializer's bytes. */
  data: string;
}

interface StoredCheckpoint {
  id: string;
  checkpoint: Blob;
  metadata: Blob;
  parentId?: string;
}

/** Keyed "taskId,idx" like MemorySaver, so a re-put of the same write is ignored. */
type StoredWrites = Record<string, { taskId: string; idx: number; channel: string; value: Blob; taskPath: string }>;

const SAFE_NAME = /^[A-Za-z0-9_.-]{1,200}$/;

function safeName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !SAFE_NAME.test(value) || value.startsWith('.')) {
    throw new Error(`Checkpoint ${field} ${JSON.stringify(value)} cannot name a file.`);
  }
  return value;
}

export class FileCheckpointSaver extends BaseCheckpointSaver {
  constructor(
    private readonly dir: string,
    serde?: SerializerProtocol,
  ) {
    super(serde);
  }

  private nsDir(threadId: unknown, ns: unknown): string {
    const thread = join(this.dir, safeName('thread_id', threadId));
    return typeof ns === 'string' && ns !== '' ? join(thread, 'ns', Buffer.from(ns).toString('base64url')) : thread;
  }

  private async dump(value: unknown): Promise<Blob> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return { type, data: Buffer.from(bytes).toString('base64') };
  }

  private async load(blob: Blob): Promise<unknown> {
    return this.serde.loadsTyped(blob.type, new Uint8Array(Buffer.from(blob.data, 'base64')));
  }

  private ids(dir: string): string[] {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return [];
      throw error;
    }
    // uuid6 ids sort by time: newest first.
    return names
      .filter((n) => n.endsWith('.json') && !n.endsWith('.writes.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .sort()
      .reverse();
  }

  private readJson<T>(file: string): T | undefined {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      throw error;
    }
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      // Never read a damaged checkpoint as "no checkpoint": that would restart the run from scratch.
      throw new AgentError(
        'CONFIG_INVALID',
        `The checkpoint ${file} is damaged (${(error as Error).message}).`,
        'Move that file out of the folder: the run then resumes from the checkpoint before it. Nothing was overwritten.',
        { cause: error },
      );
    }
  }

  /** Folders this saver has made (or found): a thread's folder is made once, not before every write. */
  private readonly made = new Set<string>();

  /** Synchronous small-file writes, for the reason given in fs/atomicWrite.ts. */
  private writeJson(file: string, dir: string, value: unknown): void {
    if (!this.made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.made.add(dir);
    }
    const text = JSON.stringify(value);
    try {
      writeFileAtomicSync(file, text);
    } catch (error) {
      // The folder was removed behind this saver's back (another process deleted the thread): make it again.
      if (!isErrno(error, 'ENOENT')) throw error;
      mkdirSync(dir, { recursive: true });
      writeFileAtomicSync(file, text);
    }
  }

  private async tuple(threadId: string, ns: string, id: string): Promise<CheckpointTuple | undefined> {
    const dir = this.nsDir(threadId, ns);
    const stored = this.readJson<StoredCheckpoint>(join(dir, `${safeName('checkpoint_id', id)}.json`));
    if (!stored) return undefined;
    const writes = this.readJson<StoredWrites>(join(dir, `${id}.writes.json`)) ?? {};
    const ordered = Object.values(writes).sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)),
    );
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const w of ordered) pendingWrites.push([w.taskId, w.channel, await this.load(w.value)]);
    const result: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: id } },
      checkpoint: (await this.load(stored.checkpoint)) as Checkpoint,
      metadata: (await this.load(stored.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (stored.parentId !== undefined)
      result.parentConfig = {
        configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: stored.parentId },
      };
    return result;
  }

  /**
   * The writes files this saver wrote since the thread was last read: a run appends to them without
   * reading them back. A read of the thread (which starts every run) forgets them, so writes another
   * process made in between are never lost.
   */
  private readonly written = new Map<string, StoredWrites>();

  private forget(threadId: string): void {
    const thread = join(this.dir, threadId);
    for (const file of this.written.keys()) if (file.startsWith(`${thread}/`)) this.written.delete(file);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = safeName('thread_id', config.configurable?.thread_id);
    this.forget(threadId);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const id = getCheckpointId(config) || this.ids(this.nsDir(threadId, ns))[0];
    return id === undefined ? undefined : this.tuple(threadId, ns, id);
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const threadId = safeName('thread_id', config.configurable?.thread_id);
    this.forget(threadId);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const wanted = config.configurable?.checkpoint_id as string | undefined;
    const before = options?.before?.configurable?.checkpoint_id as string | undefined;
    let left = options?.limit;
    for (const id of this.ids(this.nsDir(threadId, ns))) {
      if (wanted && id !== wanted) continue;
      if (before && id >= before) continue;
      const t = await this.tuple(threadId, ns, id);
      if (!t) continue;
      const metadata = (t.metadata ?? {}) as Record<string, unknown>;
      if (options?.filter && !Object.entries(options.filter).every(([k, v]) => metadata[k] === v)) continue;
      if (left !== undefined) {
        if (left <= 0) break;
        left -= 1;
      }
      yield t;
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    _newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = safeName('thread_id', config.configurable?.thread_id);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const id = safeName('checkpoint_id', checkpoint.id);
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const stored: StoredCheckpoint = {
      id,
      checkpoint: await this.dump(copyCheckpoint(checkpoint)),
      metadata: await this.dump(metadata),
      ...(parentId ? { parentId } : {}),
    };
    const dir = this.nsDir(threadId, ns);
    this.writeJson(join(dir, `${id}.json`), dir, stored);
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: id } };
  }

  /** Writes to one file are read-modify-write: they are queued so concurrent tasks cannot lose each other's. */
  private queue: Promise<void> = Promise.resolve();

  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const run = this.queue.then(() => this.putWritesNow(config, writes, taskId, taskPath));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async putWritesNow(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = safeName('thread_id', config.configurable?.thread_id);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const id = safeName('checkpoint_id', config.configurable?.checkpoint_id);
    const dir = this.nsDir(threadId, ns);
    const file = join(dir, `${id}.writes.json`);
    const existing = this.written.get(file) ?? this.readJson<StoredWrites>(file) ?? {};
    const next: StoredWrites = { ...existing };
    for (const [i, [channel, value]] of writes.entries()) {
      const idx = WRITES_IDX_MAP[channel] ?? i;
      const key = `${taskId},${idx}`;
      // Regular writes are put once; special ones (errors, interrupts: negative idx) are replaced.
      if (idx >= 0 && key in existing) continue;
      next[key] = { taskId, idx, channel, value: await this.dump(value), taskPath: taskPath ?? '' };
    }
    this.writeJson(file, dir, next);
    this.written.set(file, next);
  }

  /**
   * Retention: what resume needs stays, the rest of a thread's root checkpoints goes. Kept: every
   * checkpoint that stopped at an interrupt (a review or approval stop: its writes hold one), and, while
   * the thread can go on, everything since the stop before the latest one (the chain the current stop
   * resumes from, and its parent); a finished thread keeps only its stops and its newest checkpoint.
   * Called by the one driver of the thread (under its lease), after its run's writes are all on disk;
   * readers in other processes only ever read the newest checkpoint, which is never removed.
   * Returns the bytes before and after.
   */
  prune(threadId: string, options: { finished: boolean }): { before: number; after: number } {
    const dir = this.nsDir(threadId, '');
    const ids = this.ids(dir).reverse(); // oldest first
    const stops = ids.filter((id) => {
      const writes = this.readJson<StoredWrites>(join(dir, `${id}.writes.json`)) ?? {};
      return Object.values(writes).some((w) => w.channel === INTERRUPT);
    });
    const keepFrom = options.finished ? ids[ids.length - 1] : stops[stops.length - 2];
    const size = (id: string) =>
      [`${id}.json`, `${id}.writes.json`].reduce(
        (sum, name) => sum + (statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0),
        0,
      );
    let before = 0;
    let after = 0;
    for (const id of ids) {
      const bytes = size(id);
      before += bytes;
      if (keepFrom === undefined || id >= keepFrom || stops.includes(id)) {
        after += bytes;
        continue;
      }
      rmSync(join(dir, `${id}.json`), { force: true });
      rmSync(join(dir, `${id}.writes.json`), { force: true });
      this.written.delete(join(dir, `${id}.writes.json`));
    }
    return { before, after };
  }

  async deleteThread(threadId: string): Promise<void> {
    const thread = join(this.dir, safeName('thread_id', threadId));
    for (const dir of this.made) if (dir === thread || dir.startsWith(`${thread}/`)) this.made.delete(dir);
    this.forget(threadId);
    await rm(thread, { recursive: true, force: true });
  }
}
