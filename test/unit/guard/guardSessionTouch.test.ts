/**
 * What a statement may do to its session, read from the parse (src/guard/judge/sessionTouch.ts), where the
 * transaction pool's word match read the text: words in a literal, a comment or a name touch nothing, and a
 * statement behind a comment is read all the same.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadParser, parseSql } from '../../../src/core/sql/parse';
import { sessionTouchOf, UNTOUCHED } from '../../../src/guard/judge/sessionTouch';

const touch = (sql: string) => sessionTouchOf(parseSql(sql).statements);

describe('sessionTouchOf', () => {
  beforeAll(() => loadParser());

  it('a read whose literal, comment or column names say listen, hold, temp, close, set or deallocate touches nothing', () => {
    for (const sql of [
      "SELECT 'LISTEN x; DEALLOCATE ALL; SET a = 1' AS words",
      'SELECT 1 /* WITH HOLD, temp, advisory, reset */',
      'SELECT hold, temp, closed, settings, deallocated FROM (VALUES (1, 2, 3, 4, 5)) v(hold, temp, closed, settings, deallocated)',
      '-- set_config\nSELECT 2',
    ])
      expect(touch(sql), sql).toBe(UNTOUCHED);
  });

  it('DEALLOCATE ALL behind a comment, or among other statements, forgets every prepared statement', () => {
    for (const sql of ['/* pool */ DEALLOCATE ALL', 'SELECT 1; DEALLOCATE PREPARE ALL', 'deallocate all;'])
      expect(touch(sql), sql).toMatchObject({ deallocatesAll: true });
    expect(touch('DEALLOCATE p1')).toMatchObject({ deallocatesAll: false, deallocatesOne: 'p1' });
  });

  it('settings: SET, RESET, set_config by any schema', () => {
    for (const sql of [
      'SET statement_timeout = 1000',
      'RESET ALL',
      'SET TIME ZONE UTC',
      "SELECT pg_catalog.set_config('application_name', 'x', false)",
    ])
      expect(touch(sql), sql).toMatchObject({ sets: true });
  });

  it('state that keeps a session, or ends it: LISTEN, a cursor WITH HOLD (not without), CLOSE, advisory locks, temporary tables, DROP', () => {
    for (const sql of [
      'LISTEN c',
      'UNLISTEN *',
      'DECLARE c CURSOR WITH HOLD FOR SELECT 1',
      'CLOSE ALL',
      'SELECT pg_try_advisory_lock(1)',
      'SELECT pg_catalog.pg_advisory_unlock_all()',
      'CREATE TEMP TABLE t (a int)',
      'CREATE TABLE pg_temp.t (a int)',
      'SELECT 1 INTO TEMPORARY t',
      'DROP TABLE t',
    ])
      expect(touch(sql), sql).toMatchObject({ pins: true });
    expect(touch('DECLARE c CURSOR FOR SELECT 1')).toBe(UNTOUCHED);
  });
});
