import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { extractImage } from '../../../../src/core/db/sample/extractImage';

/** A tar archive of `entries` as PGlite's dumpDataDir writes one (ustar headers, leading slashes). */
function tar(entries: { name: string; type: '0' | '5' | '2'; data?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 'utf8');
    const data = Buffer.from(entry.data ?? '');
    header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    header.write(entry.type, 156, 'ascii');
    header.write('ustar\0', 257, 'ascii');
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  return Buffer.concat([...blocks, Buffer.alloc(1024)]);
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-extract-'));
  roots.push(root);
  return path.join(root, 'db');
}

describe('extractImage (the shipped sample database written to disk)', () => {
  it('writes folders and files where the archive names them, leading slashes and all', () => {
    const dir = freshDir();
    extractImage(
      gzipSync(
        tar([
          { name: '/base', type: '5' },
          { name: '/base/1/PG_VERSION', type: '0', data: '17\n' },
          { name: '/global/pg_control', type: '0', data: 'x'.repeat(700) },
        ]),
      ),
      dir,
    );
    expect(fs.readFileSync(path.join(dir, 'base', '1', 'PG_VERSION'), 'utf8')).toBe('17\n');
    expect(fs.statSync(path.join(dir, 'global', 'pg_control')).size).toBe(700);
  });

  it('refuses a name that climbs out of the folder, and a link, writing nothing outside', () => {
    const dir = freshDir();
    expect(() => extractImage(gzipSync(tar([{ name: '../outside.txt', type: '0', data: 'no' }])), dir)).toThrow(
      /outside its folder/,
    );
    expect(fs.existsSync(path.join(dir, '..', 'outside.txt'))).toBe(false);
    expect(() => extractImage(gzipSync(tar([{ name: '/pg_wal', type: '2' }])), freshDir())).toThrow(
      /only folders and files/,
    );
  });

  it('refuses what is not a gzipped archive, and one cut short', () => {
    expect(() => extractImage(Buffer.from('not a tarball'), freshDir())).toThrow();
    const whole = tar([{ name: '/big', type: '0', data: 'y'.repeat(2000) }]);
    expect(() => extractImage(gzipSync(whole.subarray(0, 1024)), freshDir())).toThrow(/ends inside/);
  });
});
