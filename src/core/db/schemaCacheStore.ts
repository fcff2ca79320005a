/**
 * Where the schema cache keeps one connection's entry: a small index (per schema: its version, table count,
 * the schemas it points to and the id of its blob) and one blob per schema (schemaBlob.ts), named by the hash
 * of its content. A file store keeps them under .pgagent/schema-cache/<connection>/, Redis under per-schema
 * keys. A blob is written before the index that names it, and never changed once written, so a reader of
 * any index finds whole blobs (or none: then it re-reads that schema). Reads can be ranges, so a process that
 * needs one table reads the index, that schema's directory and that table's bytes; `bytesRead` counts them.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { settled, writeFileAtomic, writeFileAtomicSync } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';
import { namesIn } from '../fs/listDir';

export const SCHEMA_CACHE_TTL_SECONDS = 3600;
/**
 * 3: a table's blob holds the foreign keys pointing to it; 4: column lists several tables share are kept once, in
 * the blob's directory; 6: each table stored as its own JSON, decoded by JSON.parse alone (5 was a binary format
 * never released) (a cache of an older format is rebuilt, not misread).
 */
export const SCHEMA_CACHE_FORMAT = 6;

export interface SchemaEntry {
  version: string;
  tables: number;
  /** Other schemas its tables point to or are pointed to from (foreign keys, partition parents): a change there re-reads this one. */
  refs: string[];
  blob: string;
  bytes: number;
  /** Length of the blob's table directory: a one-table read takes exactly it, then the table's bytes. */
  directory: number;
}

export interface SchemaIndex {
  format: typeof SCHEMA_CACHE_FORMAT;
  database: string;
  serverVersion: string;
  /** catalogActivity() when every entry was last confirmed; '' when it must be checked again. */
  activity: string;
  schemas: Record<string, SchemaEntry>;
}

/**
 * When the index was last confirmed against the catalog, by any process: the activity counters read then. A
 * one-table read within the trust window takes it instead of asking the server again (see schemaCache.ts).
 */
export interface ConfirmedStamp {
  activity: string;
  /** Date.now() of the confirmation. */
  at: number;
}

export interface SchemaBlobStore {
  readonly source: 'file' | 'redis';
  readIndex(): Promise<SchemaIndex | undefined>;
  /** The last confirmation, when one is kept (a file; a Redis key that expires with the trust window). */
  readStamp(): Promise<ConfirmedStamp | undefined>;
  writeStamp(stamp: ConfirmedStamp, ttlMs: number): Promise<void>;
  writeIndex(index: SchemaIndex): Promise<void>;
  removeIndex(): Promise<void>;
  putBlob(id: string, data: Buffer): Promise<void>;
  /**
   * Data derived from the schemas (the linking index), named `<kind>-<id of what it was derived from>`: writing
   * one lets the others of its kind go (once old enough that no reader still wants them).
   */
  readDerived(name: string): Promise<Buffer | undefined>;
  writeDerived(name: string, data: Buffer): Promise<void>;
  blob(id: string): Promise<Buffer | undefined>;
  /** Bytes [start, end) of a blob; undefined when the blob is gone. */
  range(id: string, start: number, end: number): Promise<Buffer | undefined>;
  /** Every byte this store has read (index and blobs): what a test asserts a fresh process read. */
  readonly bytesRead: number;
}

export function blobId(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 24);
}

function parseStamp(text: string): ConfirmedStamp | undefined {
  const stamp = JSON.parse(text) as Partial<ConfirmedStamp>;
  return typeof stamp.activity === 'string' && typeof stamp.at === 'number'
    ? { activity: stamp.activity, at: stamp.at }
    : undefined;
}

/** A small JSON file parsed; undefined when it was cut short (a crash mid-write, a damaged file). */
function parsedOrNone<T>(data: Buffer, parse: (text: string) => T | undefined): T | undefined {
  try {
    return parse(data.toString('utf8'));
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

function parseIndex(text: string): SchemaIndex | undefined {
  const index = JSON.parse(text) as SchemaIndex;
  return index.format === SCHEMA_CACHE_FORMAT ? index : undefined;
}

/** A blob left unnamed by every index this long is removed (a writer names its blobs well within it). */
const ORPHAN_AGE_MS = 60_000;

/**
 * A cache file's bytes (all of them, or [start, end)); undefined when it is not there. Only a plain file is read: the
 * folder is in the workspace, where a cloned repository may have put a symbolic link (to /dev/stdin, to a device) or
 * a FIFO under a cache file's name; opened without following a link and without blocking, such a name throws (the
 * cache then reads the catalog again and writes its own file over it).
 */
function readPlainFile(path: string, range?: { start: number; end: number }): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error(`${path} is not a plain file: the schema cache does not read it`);
    const start = range?.start ?? 0;
    const buffer = Buffer.alloc(Math.max(0, (range?.end ?? info.size) - start));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads are synchronous calls behind async signatures, as the atomic writes are (fs/atomicWrite.ts): a fresh
 * process reading one table makes four small reads (stamp, index, directory, table), each ~20 µs that way against
 * 0.1-0.3 ms of thread-pool round trips per open, read and close.
 */
export class FileBlobStore implements SchemaBlobStore {
  readonly source = 'file' as const;
  bytesRead = 0;
  constructor(private readonly dir: string) {}

  async readIndex(): Promise<SchemaIndex | undefined> {
    const data = await this.blobFile('index.json');
    return data && parsedOrNone(data, parseIndex);
  }

  async readStamp(): Promise<ConfirmedStamp | undefined> {
    const data = await this.blobFile('confirmed.json');
    return data && parsedOrNone(data, parseStamp);
  }

  async writeStamp(stamp: ConfirmedStamp): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFileAtomic(join(this.dir, 'confirmed.json'), JSON.stringify(stamp));
  }

  async writeIndex(index: SchemaIndex): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFileAtomic(join(this.dir, 'index.json'), JSON.stringify(index));
    await this.removeOrphans(new Set(Object.values(index.schemas).map((s) => `${s.blob}.bin`)));
  }

  async removeIndex(): Promise<void> {
    await rm(join(this.dir, 'index.json'), { force: true });
  }

  async putBlob(id: string, data: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await settled(() => writeFileAtomicSync(join(this.dir, `${id}.bin`), data));
  }

  async readDerived(name: string): Promise<Buffer | undefined> {
    return this.blobFile(`${name}.derived`);
  }

  async writeDerived(name: string, data: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await settled(() => writeFileAtomicSync(join(this.dir, `${name}.derived`), data));
    const kind = `${name.split('-')[0] ?? name}-`;
    for (const file of await namesIn(this.dir)) {
      if (!file.startsWith(kind) || !file.endsWith('.derived') || file === `${name}.derived`) continue;
      const info = await stat(join(this.dir, file)).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > ORPHAN_AGE_MS) await rm(join(this.dir, file), { force: true });
    }
  }

  async blob(id: string): Promise<Buffer | undefined> {
    return this.blobFile(`${id}.bin`);
  }

  private async blobFile(file: string, range?: { start: number; end: number }): Promise<Buffer | undefined> {
    const data = await settled(() => readPlainFile(join(this.dir, file), range));
    if (data) this.bytesRead += data.length;
    return data;
  }

  async range(id: string, start: number, end: number): Promise<Buffer | undefined> {
    return this.blobFile(`${id}.bin`, { start, end });
  }

  /** Blobs no index names any more, once old enough that no writer is still about to name them. */
  private async removeOrphans(named: ReadonlySet<string>): Promise<void> {
    for (const name of await namesIn(this.dir)) {
      if (!name.endsWith('.bin') || named.has(name)) continue;
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > ORPHAN_AGE_MS) await rm(path, { force: true });
    }
  }
}

export class RedisBlobStore implements SchemaBlobStore {
  readonly source = 'redis' as const;
  bytesRead = 0;
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async readIndex(): Promise<SchemaIndex | undefined> {
    const text = await this.redis.get(`${this.prefix}index`);
    if (!text) return undefined;
    this.bytesRead += text.length;
    return parseIndex(text);
  }

  async readStamp(): Promise<ConfirmedStamp | undefined> {
    const text = await this.redis.get(`${this.prefix}confirmed`);
    if (!text) return undefined;
    this.bytesRead += text.length;
    return parseStamp(text);
  }

  async writeStamp(stamp: ConfirmedStamp, ttlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}confirmed`, JSON.stringify(stamp), 'PX', Math.max(1, ttlMs));
  }

  async writeIndex(index: SchemaIndex): Promise<void> {
    // The blobs it names live as long as it does (a blob shared by two indexes keeps the longer life).
    const multi = this.redis.multi().set(`${this.prefix}index`, JSON.stringify(index), 'EX', SCHEMA_CACHE_TTL_SECONDS);
    for (const entry of Object.values(index.schemas)) multi.expire(this.blobKey(entry.blob), SCHEMA_CACHE_TTL_SECONDS);
    await multi.exec();
  }

  async removeIndex(): Promise<void> {
    await this.redis.del(`${this.prefix}index`);
  }

  async putBlob(id: string, data: Buffer): Promise<void> {
    await this.redis.set(this.blobKey(id), data, 'EX', SCHEMA_CACHE_TTL_SECONDS);
  }

  async readDerived(name: string): Promise<Buffer | undefined> {
    const data = await this.redis.getBuffer(`${this.prefix}derived:${name}`);
    if (data) this.bytesRead += data.length;
    return data ?? undefined;
  }

  async writeDerived(name: string, data: Buffer): Promise<void> {
    await this.redis.set(`${this.prefix}derived:${name}`, data, 'EX', SCHEMA_CACHE_TTL_SECONDS);
  }

  async blob(id: string): Promise<Buffer | undefined> {
    const data = await this.redis.getBuffer(this.blobKey(id));
    if (!data) return undefined;
    this.bytesRead += data.length;
    return data;
  }

  async range(id: string, start: number, end: number): Promise<Buffer | undefined> {
    if (end <= start) return Buffer.alloc(0);
    const [[, exists], [, data]] = (await this.redis
      .multi()
      .exists(this.blobKey(id))
      .getrangeBuffer(this.blobKey(id), start, end - 1)
      .exec()) as [[unknown, number], [unknown, Buffer]];
    if (!exists) return undefined;
    this.bytesRead += data.length;
    return data;
  }

  private blobKey(id: string): string {
    return `${this.prefix}blob:${id}`;
  }
}
