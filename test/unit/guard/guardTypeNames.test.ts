/**
 * Parse's declared parameter types as names (src/guard/judge/boundSql.ts typeNamesOf): a built-in type is asked
 * of the database once per process (a driver declares the same few on every Parse); a type created in the
 * database, which may be renamed, is asked every time.
 */
import { describe, expect, it } from 'vitest';
import type { Db } from '../../../src/core/db/db';
import { typeNamesOf } from '../../../src/guard/judge/boundSql';

/** A database that answers format_type from a table of names, counting what it is asked. */
function catalog(names: Record<number, string>): { db: Db; asked: number[][] } {
  const asked: number[][] = [];
  const db = {
    query: (_sql: string, [oids]: [number[]]) => {
      asked.push([...oids]);
      return Promise.resolve({ rows: oids.map((oid) => ({ name: names[oid] ?? null })) });
    },
  } as unknown as Db;
  return { db, asked };
}

describe('typeNamesOf', () => {
  it('asks a built-in type once, a type of the database every time, and none for open types', async () => {
    const { db, asked } = catalog({ 23: 'integer', 25: 'text', 16500: 'mood' });
    expect(await typeNamesOf(db, [0, 0])).toEqual([undefined, undefined]);
    expect(await typeNamesOf(db, [23, 0, 25])).toEqual(['integer', undefined, 'text']);
    expect(await typeNamesOf(db, [25, 23])).toEqual(['text', 'integer']);
    expect(asked).toEqual([[23, 0, 25]]);
    expect(await typeNamesOf(db, [23, 16500])).toEqual(['integer', 'mood']);
    expect(await typeNamesOf(db, [16500])).toEqual(['mood']);
    expect(asked).toEqual([[23, 0, 25], [23, 16500], [16500]]);
  });
});
