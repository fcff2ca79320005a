// Issue 21 / SPEC §5 1a, the other side: no false holds. Reads of ordinary schemas — user SQL functions that
// only compute, immutable helpers, lower/date_trunc/now, views, aggregates, tables whose triggers or
// defaults do not fire on SELECT — stay reads and return the rows psql returns; a write whose trigger only
// writes rows of this database is previewed and rolled back. These pass today and must keep passing.
// Then bad input (issue 21): a body that does not parse, a trigger on a table we cannot read, a catalog we
// lack rights to — each a clear verdict (held / not previewed), never a crash and never run.
import { describe, expect, it } from 'vitest';
import { classifySql } from '../../../../src/core/sql/classify';
import { explainRead } from '../../../../src/core/sql/explainPlan';
import { analyzeImpact } from '../../../../src/core/sql/impact';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import type { AttackWorld } from '../../../support/reachAttacks';
import {
  expectHeldRead,
  expectNotPreviewed,
  ledgerRows,
  openAs,
  plpgsql,
  scalar,
  serverFileExists,
  settle,
  shellBody,
  triggerFn,
  useAttackScene,
} from '../../../support/reachAttacks';
import { postgresAvailable } from '../../../support/services';

function safeAndBadSql(w: AttackWorld): string {
  const limited = w.role('rt_limited');
  const blind = w.role('rt_blind');
  return `
CREATE FUNCTION add1(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';
CREATE FUNCTION rt_f_double(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN RETURN x * 2; END $f$;
CREATE FUNCTION rt_f_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
CREATE OPERATOR <+> (LEFTARG = int, RIGHTARG = int, FUNCTION = rt_f_add);
CREATE TABLE rt_f_items (id int PRIMARY KEY, name text NOT NULL); INSERT INTO rt_f_items VALUES (1, 'apple'), (2, 'pear'), (3, 'plum');
CREATE VIEW rt_f_v AS SELECT id, upper(name) AS name FROM rt_f_items WHERE id < 3;
CREATE VIEW rt_f_v_add AS SELECT id, add1(id) AS next FROM rt_f_items;
CREATE TABLE rt_f_audit (note text);
CREATE TABLE rt_f_audited (id int PRIMARY KEY, v int); INSERT INTO rt_f_audited VALUES (1, 1), (2, 2);
${triggerFn('rt_f_audit_row', "INSERT INTO rt_f_audit VALUES ('changed ' || NEW.id)")}
CREATE TRIGGER rt_f_audit_row_trg AFTER UPDATE ON rt_f_audited FOR EACH ROW EXECUTE FUNCTION rt_f_audit_row();
CREATE TABLE rt_f_serial (id serial PRIMARY KEY, at timestamptz DEFAULT now()); INSERT INTO rt_f_serial (at) VALUES ('2024-01-01');
CREATE TABLE rt_f_trapped (id int PRIMARY KEY); INSERT INTO rt_f_trapped VALUES (1);
${triggerFn('rt_f_trap_shell', shellBody(w, 'rt_f_trap_shell'))}
CREATE TRIGGER rt_f_trap_shell_trg BEFORE DELETE ON rt_f_trapped FOR EACH ROW EXECUTE FUNCTION rt_f_trap_shell();

SET check_function_bodies = off;
CREATE FUNCTION rt_b_broken() RETURNS int LANGUAGE plpgsql AS $f$ BEGIN INSERT INTO rt_ledger VALUES ('rt_b_broken'; RETURN (((1; END $f$;
RESET check_function_bodies;

CREATE ROLE ${limited} LOGIN; CREATE ROLE ${blind} LOGIN;
CREATE TABLE rt_b_pub (id int PRIMARY KEY); INSERT INTO rt_b_pub VALUES (1), (2);
GRANT SELECT, DELETE ON rt_b_pub TO ${limited};
CREATE TABLE rt_b_secret (id int PRIMARY KEY, pub_id int REFERENCES rt_b_pub ON DELETE CASCADE); INSERT INTO rt_b_secret VALUES (10, 1), (20, 2);
${triggerFn('rt_b_secret_shell', shellBody(w, 'rt_b_secret_shell'))}
CREATE TRIGGER rt_b_secret_shell_trg BEFORE DELETE ON rt_b_secret FOR EACH ROW EXECUTE FUNCTION rt_b_secret_shell();

${plpgsql('rt_b_definer_shell', shellBody(w, 'rt_b_definer_shell'), 'SECURITY DEFINER')}
CREATE TABLE rt_b_blindt (id int PRIMARY KEY); INSERT INTO rt_b_blindt VALUES (1), (2);
GRANT SELECT, DELETE ON rt_b_blindt TO ${blind};
${triggerFn('rt_b_blind_shell', shellBody(w, 'rt_b_blind_shell'), 'SECURITY DEFINER')}
CREATE TRIGGER rt_b_blind_shell_trg BEFORE DELETE ON rt_b_blindt FOR EACH ROW EXECUTE FUNCTION rt_b_blind_shell();
-- A catalog the blind role may not read: function bodies (pg_proc) and triggers (pg_trigger), in this database only.
REVOKE SELECT ON pg_catalog.pg_proc FROM PUBLIC; REVOKE SELECT ON pg_catalog.pg_trigger FROM PUBLIC;
GRANT SELECT ON pg_catalog.pg_proc TO ${limited}; GRANT SELECT ON pg_catalog.pg_trigger TO ${limited};
`;
}

describe.runIf(postgresAvailable)('reach corpus: no false holds, and bad input gets a clear verdict', () => {
  const scene = useAttackScene('safe', safeAndBadSql, ['rt_limited', 'rt_blind']);
  const { read } = scene;

  /** Plain reads that must run as reads, with the rows PostgreSQL gives another connection for the same SQL. */
  const safeReads: [string, string][] = [
    ['a user SQL function that only computes', 'SELECT add1(41) AS n'],
    ['an immutable plpgsql helper', 'SELECT rt_f_double(21) AS n'],
    [
      'lower, date_trunc and now()',
      "SELECT lower('ABC') AS l, date_trunc('day', timestamp '2024-05-05 10:11:12')::text AS d, now() <= now() AS t",
    ],
    ['a view over a table', 'SELECT id, name FROM rt_f_v ORDER BY id'],
    ['a view calling a user SQL function', 'SELECT id, next FROM rt_f_v_add ORDER BY id'],
    [
      'aggregates',
      "SELECT count(*)::int AS n, sum(id)::int AS s, max(name) AS m, string_agg(name, ',' ORDER BY id) AS names FROM rt_f_items",
    ],
    ['a user operator on a SQL function that only computes', 'SELECT 2 <+> 3 AS n'],
    ['built-in casts and operators', "SELECT '1'::int + 2 AS n, 'a' || 'b' AS s, 5 % 3 AS m"],
    ['a table with an audit trigger, read by SELECT', 'SELECT id, v FROM rt_f_audited ORDER BY id'],
    ['a table with serial and now() defaults, read by SELECT', "SELECT id, at = '2024-01-01' AS same FROM rt_f_serial"],
    ['a table whose DELETE trigger runs a shell, read by SELECT (no trigger fires)', 'SELECT id FROM rt_f_trapped'],
  ];

  it.each(safeReads)('runs %s as a read, with the rows psql gets', async (_note, sql) => {
    const outcome = await read(sql);
    expect(outcome.ok && outcome.value.status, outcome.ok ? '' : String(outcome.error)).toBe('executed');
    if (!outcome.ok || outcome.value.status !== 'executed') return;
    expect(outcome.value.classification.statements[0]?.class).toBe('read');
    const expected = await scalar(
      scene.world.url,
      `SELECT json_agg(json_build_array(VARIADIC ARRAY(SELECT value::text FROM json_each_text(row_to_json(q)))))::text FROM (${sql}) q`,
    );
    const actual = JSON.stringify(
      outcome.value.result.rows.map((row) =>
        row.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))),
      ),
    );
    expect(actual).toBe(JSON.stringify(JSON.parse(String(expected))));
    expect(serverFileExists(scene.world, 'rt_f_trap_shell')).toBe(false);
  });

  it('explains a read calling immutable helpers and a view (a plan, nothing refused)', async () => {
    const plan = await explainRead(scene.db, 'SELECT rt_f_double(id), add1(id) FROM rt_f_v', DEFAULT_SAFETY);
    expect(plan.label).toMatch(/Scan on (public\.)?rt_f_items/);
  });

  it('previews a write whose trigger only writes an audit row of this database, and rolls it back', async () => {
    const audit = await scalar(scene.world.url, 'SELECT count(*)::int FROM rt_f_audit');
    const report = await analyzeImpact(
      scene.db,
      classifySql('UPDATE rt_f_audited SET v = v + 1 WHERE id = 1'),
      DEFAULT_SAFETY,
    );
    expect(report.previewed).toBe(true);
    expect(report.tables.map((t) => `${t.name}:${t.via}`)).toEqual(['rt_f_audited:direct', 'rt_f_audit:trigger']);
    expect(await scalar(scene.world.url, 'SELECT count(*)::int FROM rt_f_audit')).toBe(audit);
    expect(await scalar(scene.world.url, 'SELECT v FROM rt_f_audited WHERE id = 1')).toBe(1);
  });

  it('holds a function whose body does not parse (unknown code), never crashing and writing nothing', async () => {
    const outcome = await read('SELECT rt_b_broken()');
    expect(await ledgerRows(scene.world.url, 'rt_b_broken')).toBe(0);
    expectHeldRead(outcome, /rt_b_broken/);
  });

  it('does not preview a delete cascading to a table the role cannot read whose trigger runs the shell', async () => {
    const limited = await openAs(scene.world, scene.world.role('rt_limited'));
    try {
      const report = await settle(
        analyzeImpact(limited, classifySql('DELETE FROM rt_b_pub WHERE id = 1'), DEFAULT_SAFETY),
      );
      expect(serverFileExists(scene.world, 'rt_b_secret_shell'), 'the cascaded trigger ran the shell').toBe(false);
      expect(await scalar(scene.world.url, 'SELECT count(*)::int FROM rt_b_secret')).toBe(2);
      expectNotPreviewed(report, /rt_b_secret_shell/, 'MEDIUM', ['side-effect', 'unknown']);
    } finally {
      await limited.close();
    }
  });

  it('holds a read when the role may not read function bodies (pg_proc revoked): unknown, not run', async () => {
    const blind = await openAs(scene.world, scene.world.role('rt_blind'));
    try {
      const outcome = await read('SELECT rt_b_definer_shell()', blind);
      expect(
        serverFileExists(scene.world, 'rt_b_definer_shell'),
        'a read the role could not inspect ran the shell',
      ).toBe(false);
      // A role that cannot read pg_proc cannot name the function either: the reason says the code could not be read.
      expectHeldRead(outcome, /rt_b_definer_shell|code could not be read/);
    } finally {
      await blind.close();
    }
  });

  it('does not preview a write when the role may not read triggers (pg_trigger revoked): unknown, not run', async () => {
    const blind = await openAs(scene.world, scene.world.role('rt_blind'));
    try {
      const report = await settle(
        analyzeImpact(blind, classifySql('DELETE FROM rt_b_blindt WHERE id = 1'), DEFAULT_SAFETY),
      );
      expect(
        serverFileExists(scene.world, 'rt_b_blind_shell'),
        'a trigger the role could not inspect ran the shell',
      ).toBe(false);
      expect(await scalar(scene.world.url, 'SELECT count(*)::int FROM rt_b_blindt')).toBe(2);
      expect(report.ok, report.ok ? '' : String(report.error)).toBe(true);
      if (!report.ok) return;
      expect(report.value.previewed).toBe(false);
      expect(report.value.warnings.some((w) => w.startsWith('Not previewed'))).toBe(true);
    } finally {
      await blind.close();
    }
  });
});
