/**
 * The native relay's own reading (native/guardRelay): its verdict-cache key is the JavaScript statementKey, byte
 * for byte, on generated texts (a difference could pass a text the cache never passed), and a Query passes only
 * when its key was allowed, while trusted, as the JavaScript fast path reads it (ASCII, one NUL at its end, not a
 * guard command). Skipped when the addon is not built (npm run build builds it).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { statementKey } from '../../../src/guard/judge/verdictCache';
import { ADDON_FILE, loadAddon } from '../../../src/guard/session/nativeRelay';
import { generator } from '../../support/seededRandom';

/** The addon `npm run build` made (the guard it starts loads it from beside dist/cli.js). */
const BUILT_ADDON = fileURLToPath(new URL(`../../../dist/${ADDON_FILE}`, import.meta.url));

const { addon } = loadAddon(BUILT_ADDON);

const PIECES = [
  '0',
  '1',
  '7',
  '00',
  '42',
  '2147483647',
  '2147483648',
  '2147483649',
  '9223372036854775807',
  '9223372036854775808',
  '99999999999999999999',
  '.',
  '..',
  'e',
  'E',
  '+',
  '-',
  '--',
  ' ',
  '\t',
  '\n',
  'a',
  'x1',
  '_',
  'SELECT ',
  'FROM t ',
  'WHERE aid = ',
  '(',
  ')',
  ',',
  ';',
  '=',
  '<',
  '*',
  ':',
  '::',
  '[',
  ']',
  "'",
  '"',
  '$1',
  '/',
  '\\',
  '/*',
  '#',
  '?',
  '%',
  '\u007f',
  '\u0001',
];

function text(random: () => number): string {
  let out = '';
  const n = Math.floor(random() * 12);
  for (let i = 0; i < n; i++) out += PIECES[Math.floor(random() * PIECES.length)];
  return out;
}

const query = (sql: string): Buffer => {
  const body = Buffer.from(`${sql}\0`, 'latin1');
  const header = Buffer.alloc(5);
  header.write('Q');
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
};

describe.skipIf(!addon)('the native relay', () => {
  it('keys texts exactly as the verdict cache does (50,000 generated texts and the edges)', () => {
    const random = generator(38);
    const texts = [
      '',
      '1',
      '-1',
      '1e5',
      '1e',
      '1e+',
      '1e+5',
      '1.',
      '.5',
      '1..2',
      '1.2.3',
      '12abc',
      '0x1F',
      '1_000',
      '007',
      'SELECT abalance FROM pgbench_accounts WHERE aid = 4242;',
      'SELECT 2147483648',
      'SELECT -2147483648',
      'x'.repeat(4000),
      'x'.repeat(4001),
      `SELECT ${'1'.repeat(3999)}`,
    ];
    for (let i = 0; i < 50_000; i++) texts.push(text(random));
    for (const sql of texts)
      expect(addon!.keyOf(Buffer.from(sql, 'latin1')), JSON.stringify(sql)).toBe(statementKey(sql)?.key);
  });

  it('passes a Query only for an allowed key, while trusted, read as the fast path reads it', () => {
    const read = 'SELECT abalance FROM pgbench_accounts WHERE aid = 4242;';
    addon!.forget();
    addon!.allow(Buffer.from(statementKey(read)!.key, 'latin1'), 1);
    expect(addon!.passes(query(read))).toBe(false); // not trusted yet
    addon!.trust(60_000);
    expect(addon!.passes(query(read))).toBe(true);
    expect(addon!.passes(query(read.replace('4242', '17')))).toBe(true);
    expect(addon!.passes(query(read.replace('4242', '4242.5')))).toBe(false);
    expect(addon!.passes(query(read.replace('4242', '3000000000')))).toBe(false);
    expect(addon!.passes(query(read.replace(';', '; DELETE FROM pgbench_accounts;')))).toBe(false);
    expect(addon!.passes(query(`${read} `))).toBe(false);
    // Not ASCII, a NUL inside, a length that lies, a guard command's word: never.
    expect(addon!.passes(query(read.replace('abalance', 'abalanc\u00e9')))).toBe(false);
    expect(addon!.passes(query(read.replace(';', '\0;')))).toBe(false);
    const lying = query(read);
    lying.writeUInt32BE(lying.length, 1);
    expect(addon!.passes(lying)).toBe(false);
    const guardWord = 'SELECT abalance FROM PG_AGENT WHERE aid = 4242;';
    addon!.allow(Buffer.from(statementKey(guardWord)!.key, 'latin1'), 2);
    expect(addon!.passes(query(guardWord))).toBe(false);
    addon!.trust(0);
    expect(addon!.passes(query(read))).toBe(false);
    addon!.trust(60_000);
    addon!.forget();
    expect(addon!.passes(query(read))).toBe(false);
  });
});
