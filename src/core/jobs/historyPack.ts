/**
 * The objects of one history commit as one git packfile (`objects/pack/pack-<sha>.pack` and its `.idx`,
 * version 2), instead of one file and often one folder per object: creating files and folders is what a
 * commit costs on this kind of machine (~0.2-0.3 ms each), and a new job's first commit has ~30 objects.
 * Packs are written whole (pack first, then its index, each by rename), never changed, and read back here
 * only for the objects this project writes (no deltas); git and isomorphic-git read them as any pack.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { writeFileAtomicSync } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';

export type ObjectType = 'blob' | 'tree' | 'commit';

export interface HistoryObject {
  oid: string;
  type: ObjectType;
  body: Buffer;
}

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };
const CODE_TYPE: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob' };

function packDir(gitdir: string): string {
  return join(gitdir, 'objects', 'pack');
}

/** A pack entry's header: type and size, 4 bits then 7 bits per byte, low bits first. */
function entryHeader(type: ObjectType, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (TYPE_CODE[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0);
  return b;
}

/** Writes `objects` (distinct ids) as one pack with its index. */
export function writePack(gitdir: string, objects: HistoryObject[]): void {
  if (objects.length === 0) return;
  const parts: Buffer[] = [Buffer.from('PACK'), u32(2), u32(objects.length)];
  let offset = 12;
  const entries = objects.map((object) => {
    const entry = Buffer.concat([entryHeader(object.type, object.body.length), deflateSync(object.body)]);
    parts.push(entry);
    const at = offset;
    offset += entry.length;
    return { oid: object.oid, offset: at, crc: crc32(entry) };
  });
  const body = Buffer.concat(parts);
  const packSum = createHash('sha1').update(body).digest();
  const pack = Buffer.concat([body, packSum]);

  entries.sort((a, b) => a.oid.localeCompare(b.oid));
  const fanout = Buffer.alloc(256 * 4);
  for (let first = 0, i = 0; first < 256; first++) {
    while (i < entries.length && Number.parseInt(entries[i]!.oid.slice(0, 2), 16) <= first) i++;
    fanout.writeUInt32BE(i, first * 4);
  }
  const index = Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63]),
    u32(2),
    fanout,
    ...entries.map((e) => Buffer.from(e.oid, 'hex')),
    ...entries.map((e) => u32(e.crc)),
    ...entries.map((e) => u32(e.offset)),
    packSum,
  ]);
  const idx = Buffer.concat([index, createHash('sha1').update(index).digest()]);

  const dir = packDir(gitdir);
  mkdirSync(dir, { recursive: true });
  const name = `pack-${packSum.toString('hex')}`;
  // The pack before its index: a reader only looks at packs through their index.
  writeFileAtomicSync(join(dir, `${name}.pack`), pack);
  writeFileAtomicSync(join(dir, `${name}.idx`), idx);
}

interface PackIndex {
  count: number;
  oids: Buffer;
  offsets: number[];
}

/** Indexes already read, by path: a pack and its index never change once written. */
const indexes = new Map<string, PackIndex>();

function readIndex(path: string): PackIndex {
  const known = indexes.get(path);
  if (known) return known;
  const idx = readFileSync(path);
  if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2)
    throw new Error(`${path} is not a version 2 pack index`);
  const count = idx.readUInt32BE(8 + 255 * 4);
  const oidsAt = 8 + 256 * 4;
  const offsetsAt = oidsAt + count * 20 + count * 4;
  const offsets: number[] = [];
  for (let i = 0; i < count; i++) {
    const value = idx.readUInt32BE(offsetsAt + i * 4);
    if (value & 0x80000000)
      throw new Error(`${path} has 64-bit offsets (a pack over 2 GiB), which job histories never have`);
    offsets.push(value);
  }
  const parsed = { count, oids: idx.subarray(oidsAt, oidsAt + count * 20), offsets };
  indexes.set(path, parsed);
  return parsed;
}

function find(index: PackIndex, oid: Buffer): number {
  let low = 0;
  let high = index.count - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const cmp = Buffer.compare(index.oids.subarray(mid * 20, mid * 20 + 20), oid);
    if (cmp === 0) return mid;
    if (cmp < 0) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}

/**
 * An object from the history's packs, or undefined when none has it. Only whole objects are read
 * (the packs this module writes); a delta (from a `git gc` someone ran) is reported, not guessed.
 */
export function readPacked(gitdir: string, oid: string): { type: ObjectType; body: Buffer } | undefined {
  let names: string[];
  try {
    names = readdirSync(packDir(gitdir));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  const wanted = Buffer.from(oid, 'hex');
  for (const name of names) {
    if (!name.endsWith('.idx')) continue;
    const index = readIndex(join(packDir(gitdir), name));
    const at = find(index, wanted);
    if (at === -1) continue;
    const pack = readFileSync(join(packDir(gitdir), name.replace(/\.idx$/, '.pack')));
    let pos = index.offsets[at]!;
    let byte = pack[pos++]!;
    const code = (byte >> 4) & 0x07;
    while (byte & 0x80) byte = pack[pos++]!;
    const type = CODE_TYPE[code];
    if (type === undefined)
      throw new Error(
        `object ${oid} in ${name} is stored as a delta (type ${code}); this history was repacked by another tool`,
      );
    return { type, body: inflateSync(pack.subarray(pos)) };
  }
  return undefined;
}
