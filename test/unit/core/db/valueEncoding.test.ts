import { describe, expect, it } from 'vitest';
import type { TypeInfo } from '../../../../src/core/db/typeInfo';
import { encodeValue, parseArrayLiteral } from '../../../../src/core/db/valueEncoding';

const types = new Map<number, TypeInfo>([
  [1007, { oid: 1007, name: 'integer[]', category: 'A', elem: 23, delim: ',' }],
  [1009, { oid: 1009, name: 'text[]', category: 'A', elem: 25, delim: ',' }],
  [1231, { oid: 1231, name: 'numeric[]', category: 'A', elem: 1700, delim: ',' }],
  [1020, { oid: 1020, name: 'box[]', category: 'A', elem: 603, delim: ';' }],
]);

describe('parseArrayLiteral', () => {
  it.each([
    ['{}', []],
    ['{1,2,3}', ['1', '2', '3']],
    [
      '{{1,2},{3,4}}',
      [
        ['1', '2'],
        ['3', '4'],
      ],
    ],
    ['{"a b",NULL,"NULL","q\\"u\\\\ote",""}', ['a b', null, 'NULL', 'q"u\\ote', '']],
    ['[0:1]={7,8}', ['7', '8']],
  ])('%s', (text, expected) => {
    expect(parseArrayLiteral(text)).toEqual(expected);
  });

  it('uses the type delimiter (box[] uses ;)', () => {
    expect(parseArrayLiteral('{(1,1),(0,0);(2,2),(1,1)}', ';')).toEqual(['(1,1),(0,0)', '(2,2),(1,1)']);
  });
});

describe('encodeValue', () => {
  it('gives JSON numbers and booleans only where JSON carries them exactly', () => {
    expect(encodeValue('42', 23, types)).toBe(42);
    expect(encodeValue('-7', 21, types)).toBe(-7);
    expect(encodeValue('1.5', 701, types)).toBe(1.5);
    expect(encodeValue('NaN', 701, types)).toBe('NaN');
    expect(encodeValue('-Infinity', 700, types)).toBe('-Infinity');
    expect(encodeValue('t', 16, types)).toBe(true);
    expect(encodeValue('f', 16, types)).toBe(false);
    expect(encodeValue(null, 23, types)).toBeNull();
  });

  it('keeps PostgreSQL text for int8, numeric and the rest', () => {
    expect(encodeValue('9007199254740993', 20, types)).toBe('9007199254740993');
    expect(encodeValue('0.10000000000000000001', 1700, types)).toBe('0.10000000000000000001');
    expect(encodeValue('2024-02-29 10:00:00+00', 1184, types)).toBe('2024-02-29 10:00:00+00');
  });

  it('parses json and jsonb', () => {
    expect(encodeValue('{"a": [1, "x"]}', 3802, types)).toEqual({ a: [1, 'x'] });
  });

  it('encodes array elements by their element type', () => {
    expect(encodeValue('{1,NULL,3}', 1007, types)).toEqual([1, null, 3]);
    expect(encodeValue('{"1.10",2}', 1231, types)).toEqual(['1.10', '2']);
    expect(encodeValue('{{a,"b c"}}', 1009, types)).toEqual([['a', 'b c']]);
  });
});
