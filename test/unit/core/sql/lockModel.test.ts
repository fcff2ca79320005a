import { beforeAll, describe, expect, it } from 'vitest';
import { planStatement } from '../../../../src/core/sql/ddl/lockModel';
import { blocksOf, conflicts, fromPgLocksMode, LOCK_MODES } from '../../../../src/core/sql/ddl/lockModes';
import { loadParser } from '../../../../src/core/sql/parse';

beforeAll(async () => {
  await loadParser();
});

/** [sql, relation, mode, work, blocks, transactional] — one row per statement kind / ALTER TABLE subcommand. */
const ROWS: [string, string, string, string, string, boolean][] = [
  ['CREATE INDEX ON t (a)', 't', 'SHARE', 'scan', 'writes', true],
  ['CREATE UNIQUE INDEX i ON t (a)', 't', 'SHARE', 'scan', 'writes', true],
  ['CREATE INDEX CONCURRENTLY ON t (a)', 't', 'SHARE UPDATE EXCLUSIVE', 'scan', 'nothing', false],
  ['DROP INDEX i', 'i', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['DROP INDEX CONCURRENTLY i', 'i', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', false],
  ['REINDEX TABLE t', 't', 'ACCESS EXCLUSIVE', 'scan', 'reads and writes', true],
  ['REINDEX INDEX i', 'i', 'ACCESS EXCLUSIVE', 'scan', 'reads and writes', true],
  ['REINDEX TABLE CONCURRENTLY t', 't', 'SHARE UPDATE EXCLUSIVE', 'scan', 'nothing', false],
  ['ALTER TABLE t ADD COLUMN x int', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  [
    'ALTER TABLE t ADD COLUMN x int GENERATED ALWAYS AS (a * 2) STORED',
    't',
    'ACCESS EXCLUSIVE',
    'rewrite',
    'reads and writes',
    true,
  ],
  [
    'ALTER TABLE t ADD COLUMN x int GENERATED ALWAYS AS IDENTITY',
    't',
    'ACCESS EXCLUSIVE',
    'rewrite',
    'reads and writes',
    true,
  ],
  ['ALTER TABLE t DROP COLUMN a', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t ALTER COLUMN a TYPE bigint', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t ALTER COLUMN a SET DEFAULT 0', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t ALTER COLUMN a SET NOT NULL', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t ALTER COLUMN a DROP NOT NULL', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)', 't', 'ACCESS EXCLUSIVE', 'scan', 'reads and writes', true],
  [
    'ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0) NOT VALID',
    't',
    'ACCESS EXCLUSIVE',
    'instant',
    'reads and writes',
    true,
  ],
  [
    'ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES u (id)',
    't',
    'SHARE ROW EXCLUSIVE',
    'scan',
    'writes',
    true,
  ],
  [
    'ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES u (id)',
    'u',
    'SHARE ROW EXCLUSIVE',
    'scan',
    'writes',
    true,
  ],
  [
    'ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES u (id) NOT VALID',
    't',
    'SHARE ROW EXCLUSIVE',
    'instant',
    'writes',
    true,
  ],
  ['ALTER TABLE t ADD CONSTRAINT k UNIQUE (a)', 't', 'ACCESS EXCLUSIVE', 'scan', 'reads and writes', true],
  ['ALTER TABLE t ADD CONSTRAINT k UNIQUE USING INDEX i', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t ADD PRIMARY KEY (a)', 't', 'ACCESS EXCLUSIVE', 'scan', 'reads and writes', true],
  ['ALTER TABLE t VALIDATE CONSTRAINT c', 't', 'SHARE UPDATE EXCLUSIVE', 'scan', 'nothing', true],
  ['ALTER TABLE t DROP CONSTRAINT c', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t SET (fillfactor = 70)', 't', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  ['ALTER TABLE t SET (autovacuum_enabled = false)', 't', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  [
    'ALTER TABLE t SET (toast_tuple_target = 256, parallel_workers = 2)',
    't',
    'SHARE UPDATE EXCLUSIVE',
    'instant',
    'nothing',
    true,
  ],
  ['ALTER TABLE t ALTER COLUMN a SET STATISTICS 500', 't', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  ['ALTER TABLE t RENAME COLUMN a TO b', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE t RENAME TO u', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER INDEX i RENAME TO j', 'i', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  ['ALTER TABLE p ATTACH PARTITION c FOR VALUES IN (1)', 'p', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  ['ALTER TABLE p ATTACH PARTITION c FOR VALUES IN (1)', 'c', 'ACCESS EXCLUSIVE', 'scan', 'reads and writes', true],
  ['ALTER TABLE p DETACH PARTITION c', 'p', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['ALTER TABLE p DETACH PARTITION c CONCURRENTLY', 'p', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', false],
  ['ALTER TABLE t SET LOGGED', 't', 'ACCESS EXCLUSIVE', 'rewrite', 'reads and writes', true],
  ['ALTER TABLE t SET UNLOGGED', 't', 'ACCESS EXCLUSIVE', 'rewrite', 'reads and writes', true],
  ['ALTER TABLE t SET TABLESPACE pg_default', 't', 'ACCESS EXCLUSIVE', 'rewrite', 'reads and writes', true],
  ['ALTER TABLE t DISABLE TRIGGER ALL', 't', 'SHARE ROW EXCLUSIVE', 'instant', 'writes', true],
  ['ALTER TABLE t ENABLE ROW LEVEL SECURITY', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['VACUUM t', 't', 'SHARE UPDATE EXCLUSIVE', 'scan', 'nothing', false],
  ['VACUUM (ANALYZE) t', 't', 'SHARE UPDATE EXCLUSIVE', 'scan', 'nothing', false],
  ['VACUUM FULL t', 't', 'ACCESS EXCLUSIVE', 'rewrite', 'reads and writes', false],
  ['ANALYZE t', 't', 'SHARE UPDATE EXCLUSIVE', 'scan', 'nothing', true],
  ['CLUSTER t USING i', 't', 'ACCESS EXCLUSIVE', 'rewrite', 'reads and writes', true],
  ['TRUNCATE t', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['DROP TABLE t', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['DROP VIEW v', 'v', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['CREATE TABLE c PARTITION OF p FOR VALUES IN (2)', 'p', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['CREATE TABLE n (id int REFERENCES u (id))', 'u', 'SHARE ROW EXCLUSIVE', 'instant', 'writes', true],
  ['COMMENT ON TABLE t IS $$x$$', 't', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  ['COMMENT ON COLUMN t.a IS $$x$$', 't', 'SHARE UPDATE EXCLUSIVE', 'instant', 'nothing', true],
  [
    'CREATE TRIGGER g AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()',
    't',
    'SHARE ROW EXCLUSIVE',
    'instant',
    'writes',
    true,
  ],
  ['DROP TRIGGER g ON t', 't', 'SHARE ROW EXCLUSIVE', 'instant', 'writes', true],
  ['CREATE POLICY p ON t USING (true)', 't', 'ACCESS EXCLUSIVE', 'instant', 'reads and writes', true],
  ['REFRESH MATERIALIZED VIEW m', 'm', 'ACCESS EXCLUSIVE', 'rewrite', 'reads and writes', true],
  ['REFRESH MATERIALIZED VIEW CONCURRENTLY m', 'm', 'EXCLUSIVE', 'rewrite', 'writes', true],
  ['LOCK TABLE t IN SHARE MODE', 't', 'SHARE', 'instant', 'writes', true],
  ['DELETE FROM t WHERE a = 1', 't', 'ROW EXCLUSIVE', 'instant', 'nothing', true],
];

describe('lock model (SPEC §5.4a; PostgreSQL "Explicit Locking" and each command page)', () => {
  it.each(ROWS)('%s → %s gets %s (%s), blocks %s', (sql, relation, mode, work, blocks, transactional) => {
    const plan = planStatement(sql);
    const lock = plan.locks.find((l) => l.relation === relation);
    expect(lock, `no lock on ${relation}: ${JSON.stringify(plan.locks)}`).toBeDefined();
    expect({
      mode: lock?.mode,
      work: lock?.work,
      blocks: lock ? blocksOf(lock.mode) : undefined,
      transactional: plan.transactional,
    }).toEqual({ mode, work, blocks, transactional });
  });

  it.each([
    ['GRANT SELECT ON t TO PUBLIC'],
    ['REVOKE SELECT ON t FROM PUBLIC'],
    ['CREATE VIEW v AS SELECT * FROM t'],
    ['CREATE TABLE n (id int)'],
  ])('%s takes no table lock that blocks anyone', (sql) => {
    expect(planStatement(sql).locks.filter((l) => blocksOf(l.mode) !== 'nothing')).toEqual([]);
  });

  it('ALTER TYPE … ADD VALUE runs alone; other ALTER TYPE forms do not', () => {
    expect(planStatement("ALTER TYPE mood ADD VALUE 'ok'").transactional).toBe(false);
    expect(planStatement("ALTER TYPE mood RENAME VALUE 'ok' TO 'fine'").transactional).toBe(true);
  });

  it('takes the strongest mode and longest work of all subcommands on one table', () => {
    const plan = planStatement('ALTER TABLE t ALTER COLUMN a SET STATISTICS 100, ADD CONSTRAINT c CHECK (a > 0)');
    expect(plan.locks).toHaveLength(1);
    expect(plan.locks[0]).toMatchObject({ relation: 't', mode: 'ACCESS EXCLUSIVE', work: 'scan' });
  });

  it('reads the parts the catalog checks need: defaults, CHECK text, FK columns', () => {
    expect(planStatement('ALTER TABLE s.t ADD COLUMN x float DEFAULT random() NOT NULL').changes[0]).toMatchObject({
      kind: 'addColumn',
      table: 's.t',
      column: 'x',
      defaultSql: 'random()',
      defaultFunctions: ['random'],
      notNull: true,
    });
    expect(planStatement("ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0 AND b <> ')')").changes[0]).toMatchObject({
      kind: 'addCheck',
      exprSql: "a > 0 AND b <> ')'",
      notValid: false,
    });
    expect(
      planStatement('ALTER TABLE t ADD FOREIGN KEY (a, b) REFERENCES u (x, y) NOT VALID').changes[0],
    ).toMatchObject({
      kind: 'addForeignKey',
      columns: ['a', 'b'],
      refTable: 'u',
      refColumns: ['x', 'y'],
      notValid: true,
    });
  });
});

describe('lock modes (table 13.2)', () => {
  it('the conflict matrix is symmetric', () => {
    for (const a of LOCK_MODES) for (const b of LOCK_MODES) expect(conflicts(a, b)).toBe(conflicts(b, a));
  });

  it('maps pg_locks names', () => {
    expect(fromPgLocksMode('AccessExclusiveLock')).toBe('ACCESS EXCLUSIVE');
    expect(fromPgLocksMode('ShareUpdateExclusiveLock')).toBe('SHARE UPDATE EXCLUSIVE');
    expect(fromPgLocksMode('SIReadLock')).toBeUndefined();
  });
});
