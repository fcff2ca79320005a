/**
 * The guard's pass-cache keys (src/guard/verdictCache.ts): which texts share a key, which never do, and
 * when a number may be abstracted at all (only an expression constant in PostgreSQL's own tree).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadParser, parseSql } from '../../../src/core/sql/parse';
import { schemaChanges } from '../../../src/core/db/schemaChanges';
import {
  MAX_ENTRIES,
  numbersAreConstants,
  PassCache,
  passCacheOf,
  statementKey,
} from '../../../src/guard/judge/verdictCache';

const key = (sql: string) => statementKey(sql)?.key;

describe('statementKey', () => {
  it('abstracts a plain integer, so pgbench -S with a new aid each time shares one key', () => {
    expect(key('SELECT abalance FROM pgbench_accounts WHERE aid = 4242;')).toBe(
      key('SELECT abalance FROM pgbench_accounts WHERE aid = 17;'),
    );
    expect(key('SELECT a FROM t WHERE x = -5')).toBe(key('SELECT a FROM t WHERE x = -6'));
    expect(key('SELECT 1.5')).toBe(key('SELECT 2.25'));
    expect(key('SELECT 1e5')).toBe(key('SELECT 3.0E-2'));
  });

  it('keeps apart numbers of different types: int4, int8, numeric', () => {
    expect(key('SELECT f(1)')).not.toBe(key('SELECT f(3000000000)'));
    expect(key('SELECT f(1)')).not.toBe(key('SELECT f(1.0)'));
    expect(key('SELECT f(1)')).not.toBe(key('SELECT f(1e0)'));
    expect(key('SELECT f(3000000000)')).not.toBe(key('SELECT f(30000000000000000000)'));
    // 2147483648 is int8, and int4 after a minus sign; 9223372036854775808 likewise int8/numeric: never abstracted.
    expect(key('SELECT f(-2147483648)')).not.toBe(key('SELECT f(-2147483649)'));
    expect(key('SELECT f(-2147483648)')).not.toBe(key('SELECT f(-2147483647)'));
    expect(key('SELECT f(-9223372036854775808)')).not.toBe(key('SELECT f(-9223372036854775807)'));
    expect(key('SELECT f(2147483647)')).toBe(key('SELECT f(0000000000000000001)'));
  });

  it('never abstracts strings, $n, comments or numbers the lexer of another version reads differently', () => {
    expect(key("SELECT h('1')")).not.toBe(key("SELECT h('2')"));
    expect(key('SELECT $1')).toBe('=SELECT $1');
    expect(key('SELECT 1 -- x')).toBe('=SELECT 1 -- x');
    expect(key('SELECT 1 /* x */')).toBe('=SELECT 1 /* x */');
    for (const odd of [
      'SELECT 0x1F',
      'SELECT 1_000',
      'SELECT 12abc',
      'SELECT 1..2',
      'SELECT .5',
      'SELECT 1.2.3',
      'SELECT t.5',
    ]) {
      expect(key(odd)).toBe(`=${odd}`);
    }
    expect(key('SELECT "a1" FROM t')).toBe('=SELECT "a1" FROM t');
  });

  it('keeps digits that belong to a name', () => {
    expect(key('SELECT c1 FROM t2')).toBe('#SELECT c1 FROM t2');
    expect(statementKey('SELECT c1 FROM t2 WHERE x = 3')?.numbers).toEqual([28]);
  });
});

describe('numbersAreConstants', () => {
  beforeAll(() => loadParser());
  const constants = (sql: string) => numbersAreConstants(parseSql(sql), statementKey(sql)!.numbers);

  it('holds for expression constants, negated ones included', () => {
    expect(constants('SELECT abalance FROM pgbench_accounts WHERE aid = 4242')).toBe(true);
    expect(constants('SELECT f(-5), 2 - 3, x[1] FROM t ORDER BY 1 LIMIT 10')).toBe(true);
  });

  it('fails for a number that is an option, a setting or anything else the judgement may read', () => {
    expect(constants('EXPLAIN (ANALYZE 0) SELECT 1')).toBe(false);
    expect(constants('BEGIN READ ONLY; EXPLAIN (ANALYZE 0) SELECT 1')).toBe(false);
    expect(constants('FETCH 5 FROM c')).toBe(false);
    expect(constants('CREATE SEQUENCE s INCREMENT 5')).toBe(false);
  });
});

describe('PassCache', () => {
  it('forgets the least recently used key beyond its bound', () => {
    const cache = new PassCache();
    for (let i = 0; i < MAX_ENTRIES; i++) cache.add(`k${i}`);
    expect(cache.has('k0')).toBe(true);
    cache.add('new');
    expect(cache.size).toBe(MAX_ENTRIES);
    expect(cache.has('k0')).toBe(true);
    expect(cache.has('k1')).toBe(false);
  });

  it('forgets every kept pass when this process announces a schema change', async () => {
    const version = {};
    passCacheOf(version).add('#SELECT a FROM t WHERE id = \0I');
    expect(passCacheOf(version).has('#SELECT a FROM t WHERE id = \0I')).toBe(true);
    await schemaChanges.announce({ connection: 'i38f-test' });
    expect(passCacheOf(version).has('#SELECT a FROM t WHERE id = \0I')).toBe(false);
  });
});
