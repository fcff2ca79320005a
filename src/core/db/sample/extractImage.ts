/**
 * Writes the shipped sample-database image (a gzipped tar of PGlite's data directory, as `dumpDataDir`
 * makes it) into a directory with Node's own gunzip and file writes. PGlite's `loadDataDir` does the same
 * through its in-memory file system and takes ~2.2 s; this takes a fraction of that, and PGlite then opens
 * the folder as it opens any existing database. Only folders and regular files are expected; anything else
 * (a link, a name climbing out of the folder, a damaged header) is refused and the caller generates instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { isInside } from '../../fs/isInside';

const BLOCK = 512;

export function extractImage(gzipped: Uint8Array, dir: string): void {
  const tar = gunzipSync(gzipped);
  const root = path.resolve(dir);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break; // the end-of-archive blocks
    const name = field(header, 345, 155)
      ? `${field(header, 345, 155)}/${field(header, 0, 100)}`
      : field(header, 0, 100);
    const size = Number.parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 0);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`the image has a damaged header at byte ${offset}`);
    const target = path.resolve(root, `.${path.posix.sep}${name.replace(/^\/+/, '')}`);
    if (target !== root && !isInside(root, target))
      throw new Error(`the image names a path outside its folder: ${name}`);
    offset += BLOCK;
    if (type === '5') {
      fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    } else if (type === '0' || type === '\0') {
      if (offset + size > tar.length) throw new Error(`the image ends inside ${name}`);
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      fs.writeFileSync(target, tar.subarray(offset, offset + size), { mode: 0o600 });
    } else {
      throw new Error(`the image holds an entry of type "${type}" (${name}); only folders and files are expected`);
    }
    offset += Math.ceil(size / BLOCK) * BLOCK;
  }
}

/** A NUL-terminated ASCII field of a tar header. */
function field(header: Uint8Array, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return Buffer.from(end === -1 ? bytes : bytes.subarray(0, end)).toString('utf8');
}
