/**
 * The results grid's edits as SQL (issue 33): one statement per row by primary key and read values, literals
 * quoted by the rules (hostile values included), and which reads may be edited at all.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { EditTarget } from '../../../../src/core/sql/gridEdits';
import { buildGridEdits, literal, quoteLiteral } from '../../../../src/core/sql/gridEdits';
import { gridEditTarget } from '../../../../src/core/sql/gridEditTarget';
import { loadParser, parseSql } from '../../../../src/core/sql/parse';
import { inputText } from '../../../../src/shared/gridValues';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { col, domainTables, table } from '../../../fixtures/bigSchema';

beforeAll(async () => {
  await loadParser();
});

const target: EditTarget = {
  schema: 'public',
  table: 'items',
  primaryKey: ['id'],
  columns: [
    { name: 'id', type: 'integer' },
    { name: 'label', type: 'text' },
    { name: 'price', type: 'numeric(10,2)' },
    { name: 'doc', type: 'json' },
    { name: 'tags', type: 'text[]' },
    { name: 'raw', type: 'bytea' },
    { name: 'left', type: 'boolean' },
    null,
  ],
};
const rows = [
  [1, "O'Brien", '9.99', { a: 1 }, ['x', 'y z'], '\\x0102', true, 'expr'],
  [2, null, '0.00', null, null, null, false, 'expr'],
];

describe('literals', () => {
  it.each([
    ["O'Brien", "'O''Brien'"],
    ['a\\b', "E'a\\\\b'"],
    ["\\'; DROP TABLE x; --", "E'\\\\''; DROP TABLE x; --'"],
    ['NULL', "'NULL'"],
    ['日本語 ✓ 🐘', "'日本語 ✓ 🐘'"],
    ['', "''"],
  ])('%j is quoted as %s', (text, sql) => {
    expect(quoteLiteral(text)).toBe(sql);
  });

  it('refuses NUL and broken Unicode', () => {
    expect(() => quoteLiteral('a\u0000b')).toThrow(/NUL/);
    expect(() => quoteLiteral('a\uD800b')).toThrow(/Unicode/);
  });

  it('keeps numbers and booleans bare only for their own types; NULL is not the text NULL', () => {
    expect(literal('12.50', 'numeric(10,2)')).toBe('12.50');
    expect(literal('-3', 'integer')).toBe('-3');
    expect(literal('1e400', 'double precision')).toBe("'1e400'");
    expect(literal('0.1', 'real')).toBe("'0.1'");
    expect(literal('12', 'text')).toBe("'12'");
    expect(literal('1; DROP TABLE x', 'integer')).toBe("'1; DROP TABLE x'");
    expect(literal('true', 'boolean')).toBe('true');
    expect(literal(null, 'text')).toBe('NULL');
    expect(literal('NULL', 'text')).toBe("'NULL'");
  });

  it('gives back PostgreSQL input text for grid values (arrays, json, booleans)', () => {
    expect(inputText(['a', null, 'NULL', 'q"\\'])).toBe('{"a",NULL,"NULL","q\\"\\\\"}');
    expect(
      inputText([
        [1, 2],
        [3, 4],
      ]),
    ).toBe('{{"1","2"},{"3","4"}}');
    expect(inputText({ k: [1, 'x'] })).toBe('{"k":[1,"x"]}');
    expect(inputText(false)).toBe('false');
    expect(inputText(null)).toBeNull();
  });
});

describe('buildGridEdits', () => {
  it('deletes, then updates, then inserts; each by key and by the values read', () => {
    const built = buildGridEdits(target, rows, [
      { kind: 'insert', cells: [{ column: 1, value: { text: 'new' } }] },
      { kind: 'update', row: 0, cells: [{ column: 1, value: { text: "O'Neil" } }] },
      { kind: 'delete', row: 1 },
    ]);
    expect(built.sql.split('\n')).toEqual([
      'DELETE FROM public.items WHERE id = 2 AND label IS NULL AND price = 0.00 AND tags IS NULL AND raw IS NULL AND "left" = false;',
      "UPDATE public.items SET label = 'O''Neil' WHERE id = 1 AND label = 'O''Brien';",
      "INSERT INTO public.items (label) VALUES ('new');",
    ]);
    expect(built.expected).toEqual({ updated: 1, inserted: 1, deleted: 1 });
  });

  it('writes NULL, the text NULL, bytea, json, arrays and a key change as typed', () => {
    const built = buildGridEdits(target, rows, [
      {
        kind: 'update',
        row: 0,
        cells: [
          { column: 0, value: { text: '10' } },
          { column: 1, value: { null: true } },
          { column: 3, value: { text: '{"b": "it\'s"}' } },
          { column: 4, value: { text: '{"NULL",NULL}' } },
          { column: 5, value: { text: '\\xdeadbeef' } },
        ],
      },
      { kind: 'insert', cells: [{ column: 1, value: { text: 'NULL' } }] },
      { kind: 'insert', cells: [] },
    ]);
    expect(built.sql.split('\n')).toEqual([
      `UPDATE public.items SET id = 10, label = NULL, doc = '{"b": "it''s"}', tags = '{"NULL",NULL}', raw = E'\\\\xdeadbeef' WHERE id = 1 AND label = 'O''Brien' AND tags = '{"x","y z"}' AND raw = E'\\\\x0102';`,
      "INSERT INTO public.items (label) VALUES ('NULL');",
      'INSERT INTO public.items DEFAULT VALUES;',
    ]);
  });

  it('refuses what cannot be written as asked', () => {
    const cases: [Parameters<typeof buildGridEdits>[2], RegExp][] = [
      [[], /no changes/],
      [[{ kind: 'update', row: 9, cells: [{ column: 1, value: { text: 'x' } }] }], /no row 10/],
      [[{ kind: 'update', row: 0, cells: [{ column: 7, value: { text: 'x' } }] }], /not a column/],
      [[{ kind: 'update', row: 0, cells: [{ column: 1, value: { text: 'a\u0000' } }] }], /NUL/],
      [
        [
          { kind: 'update', row: 0, cells: [{ column: 1, value: { text: 'x' } }] },
          { kind: 'delete', row: 0 },
        ],
        /changed twice/,
      ],
      [
        [
          {
            kind: 'update',
            row: 0,
            cells: [
              { column: 1, value: { text: 'x' } },
              { column: 1, value: { text: 'y' } },
            ],
          },
        ],
        /twice/,
      ],
    ];
    for (const [edits, message] of cases) expect(() => buildGridEdits(target, rows, edits)).toThrow(message);
    expect(() => buildGridEdits({ ...target, primaryKey: ['nope'] }, rows, [{ kind: 'delete', row: 0 }])).toThrow(
      /primary key column nope/,
    );
  });

  it('builds SQL the parser reads as exactly the statements intended, whatever the values', () => {
    const hostile = ["'); DELETE FROM items; --", '\\', "\\'", '$$', "E'\\'", '*/ SELECT 1; /*'];
    for (const text of hostile) {
      const built = buildGridEdits(target, rows, [{ kind: 'update', row: 0, cells: [{ column: 1, value: { text } }] }]);
      const parsed = parseSql(built.sql);
      expect(parsed.statements.map((s) => s.kind)).toEqual(['UpdateStmt']);
    }
  });
});

describe('gridEditTarget', () => {
  const snapshot: SchemaSnapshot = {
    database: 'shop',
    serverVersion: '16',
    tables: [
      ...domainTables(),
      table('orders', [col('id', 'bigint')], { schema: 'archive' }),
      table('no_key', [col('a')], { primaryKey: null }),
      table('v', [col('id')], { kind: 'view' }),
    ],
  };
  const fields = (...names: string[]) => names.map((name) => ({ name }));

  it('maps SELECT * and named columns of one table, expressions not editable', () => {
    const star = gridEditTarget(
      'SELECT * FROM public.customers LIMIT 100',
      snapshot,
      fields('id', 'full_name', 'email', 'created_at'),
    );
    expect(star).toMatchObject({ ok: true, target: { schema: 'public', table: 'customers', primaryKey: ['id'] } });
    const named = gridEditTarget(
      'SELECT c.id, upper(email) AS shout, c.full_name AS who FROM customers c WHERE id > 3',
      snapshot,
      fields('id', 'shout', 'who'),
    );
    expect(named.ok && named.target.columns.map((c) => c?.name ?? null)).toEqual(['id', null, 'full_name']);
  });

  it.each([
    ['SELECT * FROM orders', 'name its schema'],
    ['SELECT * FROM public.orders o JOIN public.customers c ON c.id = o.customer_id', 'one table'],
    ['SELECT DISTINCT id FROM public.customers', 'DISTINCT'],
    ['SELECT id FROM public.customers UNION SELECT id FROM public.orders', 'UNION'],
    ['SELECT count(*) FROM public.customers GROUP BY email', 'GROUP BY'],
    ['SELECT * FROM no_key', 'no primary key'],
    ['SELECT * FROM v', 'view'],
    ['SELECT email FROM public.customers', 'primary key (id)'],
    ['SELECT 1; SELECT 2', 'one SELECT'],
  ])('%s is not editable (%s)', (sql, reason) => {
    const result = gridEditTarget(sql, snapshot, fields('id'));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(reason);
  });

  it('refuses a result that no longer matches the table as read', () => {
    const result = gridEditTarget('SELECT * FROM public.customers', snapshot, fields('id', 'full_name'));
    expect(!result.ok && result.reason).toContain('does not match');
  });
});
