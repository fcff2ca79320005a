// Tables with the same columns (a schema per tenant) share one frozen column list, so 50,000 tables hold a
// handful of lists; what belongs to one table only (a CHECK constraint's literals, its value words, its
// sample values, another default) gives that table a list of its own and never reaches the others.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { introspectSchema } from '../../../../src/core/db/introspect';
import type { SchemaSnapshot, TableInfo } from '../../../../src/shared/schema';
import { closeScratch, openScratch, type OpenedScratch } from '../../../support/openedScratch';
import { postgresAvailable } from '../../../support/services';

const SQL = `
CREATE TYPE mood AS ENUM ('calm', 'angry');
CREATE SCHEMA a; CREATE SCHEMA b; CREATE SCHEMA c; CREATE SCHEMA d;
CREATE TABLE a.orders (id int PRIMARY KEY, status text DEFAULT 'new', m mood);
CREATE TABLE d.orders (id int PRIMARY KEY, status text DEFAULT 'new', m mood);
CREATE TABLE b.orders (id int PRIMARY KEY, status text DEFAULT 'new' CHECK (status IN ('new', 'paid')), m mood);
CREATE TABLE c.orders (id int PRIMARY KEY, status text DEFAULT 'new', m mood);
CREATE TABLE c.items (id int PRIMARY KEY, status text DEFAULT 'old', m mood);
INSERT INTO c.orders SELECT g, CASE WHEN g % 2 = 0 THEN 'shipped' ELSE 'returned' END FROM generate_series(1, 200) g;
ANALYZE c.orders;`;

describe.runIf(postgresAvailable)('introspection shares the column lists tables have alike', () => {
  let opened: OpenedScratch | undefined;
  let snapshot: SchemaSnapshot;
  const table = (schema: string, name: string): TableInfo => {
    const found = snapshot.tables.find((t) => t.schema === schema && t.name === name);
    if (!found) throw new Error(`no ${schema}.${name}`);
    return found;
  };

  beforeAll(async () => {
    opened = await openScratch(SQL);
    snapshot = await opened.db.withSession((s) => introspectSchema(s, { sampleValues: true }));
  }, 60_000);
  afterAll(() => closeScratch(opened));

  it('gives tables of the same columns one frozen list: a write to it throws', () => {
    const [a, d] = [table('a', 'orders'), table('d', 'orders')];
    expect(a.columns).toBe(d.columns);
    expect(a.columns).toEqual([
      { name: 'id', type: 'integer', nullable: false, default: null, comment: null },
      { name: 'status', type: 'text', nullable: true, default: "'new'::text", comment: null },
      { name: 'm', type: 'mood', nullable: true, default: null, comment: null, allowedValues: ['calm', 'angry'] },
    ]);
    const status = a.columns[1];
    if (!status) throw new Error('no status');
    expect(() => (status.comment = 'mine')).toThrow(TypeError);
    expect(() => a.columns.pop()).toThrow(TypeError);
    expect(() => a.columns[2]?.allowedValues?.push('sad')).toThrow(TypeError);
    expect(d.columns[1]?.comment).toBeNull();
  });

  it("keeps one table's CHECK literals, value words, samples and defaults to that table", () => {
    const [a, b, c, items] = [table('a', 'orders'), table('b', 'orders'), table('c', 'orders'), table('c', 'items')];
    for (const other of [b, c, items]) expect(other.columns).not.toBe(a.columns);
    expect(b.columns[1]?.allowedValues).toEqual(['new', 'paid']);
    expect(c.columns[1]?.valueWords).toEqual(expect.arrayContaining(['shipped', 'returned']));
    expect(c.columns[1]?.samples).toEqual(expect.arrayContaining(['shipped', 'returned']));
    expect(items.columns[1]?.default).toBe("'old'::text");
    // Nothing of theirs reached the shared list.
    expect(a.columns[1]).toEqual({
      name: 'status',
      type: 'text',
      nullable: true,
      default: "'new'::text",
      comment: null,
    });
    // Every table's enum labels are still there, and the key columns alike are one list too.
    for (const t of [a, b, c, items]) expect(t.columns[2]?.allowedValues).toEqual(['calm', 'angry']);
    expect(b.primaryKey).toBe(a.primaryKey);
  });
});
