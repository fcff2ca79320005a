// Event triggers filter on PostgreSQL's command tags (SPEC §5 1a): the tag we derive must be PostgreSQL's, or
// none at all (then every filter is taken to match); a wrong tag would skip a trigger that fires.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadParser, parseSql } from '../../../../src/core/sql/parse';
import { isRec } from '../../../../src/core/sql/parseTree';
import { commandTag } from '../../../../src/core/sql/reach/statementReach';

const tagOf = (sql: string): string | undefined => {
  const statement = parseSql(sql).statements[0];
  if (!statement) throw new Error('no statement');
  const node = (statement.tree as Record<string, unknown>)[statement.kind];
  return commandTag(statement.kind, isRec(node) ? node : {});
};

describe('command tags of DDL', () => {
  beforeAll(loadParser);

  it("gives PostgreSQL's tag for the statements event triggers usually filter on", () => {
    expect(
      [
        'CREATE TABLE t (id int)',
        'CREATE INDEX ON t (a)',
        'CREATE VIEW v AS SELECT 1',
        'CREATE MATERIALIZED VIEW m AS SELECT 1',
        'CREATE TABLE t2 AS SELECT 1',
        'SELECT 1 INTO t3',
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        'CREATE PROCEDURE p() LANGUAGE sql AS $$ SELECT 1 $$',
        'DROP TABLE t',
        'DROP FUNCTION f()',
        'DROP MATERIALIZED VIEW m',
        'ALTER TABLE t ADD COLUMN b int',
        'ALTER INDEX i RENAME TO j',
        'GRANT SELECT ON t TO PUBLIC',
        'REVOKE SELECT ON t FROM PUBLIC',
        'REFRESH MATERIALIZED VIEW m',
        "COMMENT ON TABLE t IS 'x'",
        'CREATE SCHEMA s',
        'CREATE EXTENSION hstore',
      ].map(tagOf),
    ).toEqual([
      'CREATE TABLE',
      'CREATE INDEX',
      'CREATE VIEW',
      'CREATE MATERIALIZED VIEW',
      'CREATE TABLE AS',
      'SELECT INTO',
      'CREATE FUNCTION',
      'CREATE PROCEDURE',
      'DROP TABLE',
      'DROP FUNCTION',
      'DROP MATERIALIZED VIEW',
      'ALTER TABLE',
      undefined,
      'GRANT',
      'REVOKE',
      'REFRESH MATERIALIZED VIEW',
      'COMMENT',
      'CREATE SCHEMA',
      'CREATE EXTENSION',
    ]);
  });

  it('gives no tag when unsure, so that every tag filter matches', () => {
    for (const sql of [
      'DROP TEXT SEARCH CONFIGURATION c',
      'ALTER TABLE t RENAME COLUMN a TO b',
      'DROP OPERATOR === (int, int)',
      'CREATE PUBLICATION p',
    ]) {
      expect(tagOf(sql), sql).toBeUndefined();
    }
  });
});
