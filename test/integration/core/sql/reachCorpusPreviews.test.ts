// Issue 21 / SPEC §5 1a, 4 on the preview path (`analyzeImpact`, what `pg-agent impact` runs): a write whose
// reach does what ROLLBACK cannot undo (or runs unknown code) is not previewed — `previewed: false`, a
// "Not previewed" warning naming the function or trigger, risk at least HIGH (MEDIUM for unknown code), the
// function in `reach` — and nothing ran on the server: no file, the victim alive, no row committed by
// another connection, no table created outside the preview, no advisory lock left, no lock others wait on.
import { describe, expect, it } from 'vitest';
import { classifySql } from '../../../../src/core/sql/classify';
import { analyzeImpact } from '../../../../src/core/sql/impact';
import type { ImpactOptions } from '../../../../src/core/sql/impact';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import type { AttackWorld } from '../../../support/reachAttacks';
import {
  dblinkBody,
  dblinkConninfo,
  expectNoLockLeft,
  expectNotPreviewed,
  fileBody,
  ledgerRows,
  plpgsql,
  probeWhile,
  scalar,
  serverFileExists,
  settle,
  shellBody,
  tableExists,
  triggerFn,
  useAttackScene,
  withClient,
  withVictim,
} from '../../../support/reachAttacks';
import { postgresAvailable } from '../../../support/services';

/** A table `name` (id, v) with rows 1..3 and a trigger `fn` running `body` `timing` (e.g. "BEFORE DELETE") for each `level`. */
function triggered(
  name: string,
  fn: string,
  body: string,
  timing: string,
  level: 'ROW' | 'STATEMENT' = 'ROW',
  fnOptions = '',
): string {
  return `CREATE TABLE ${name} (id int PRIMARY KEY, v int NOT NULL DEFAULT 0); INSERT INTO ${name} (id) VALUES (1), (2), (3);
${triggerFn(fn, body, fnOptions)}CREATE TRIGGER ${fn}_trg ${timing} ON ${name} FOR EACH ${level} EXECUTE FUNCTION ${fn}();\n`;
}

function previewAttacksSql(w: AttackWorld): string {
  const shell = (name: string) => shellBody(w, name);
  // A non-volatile function may not run COPY, but it may call lo_export: a lying IMMUTABLE label writing a file.
  const immutableFile = (name: string) =>
    `CREATE FUNCTION ${name}(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN ${fileBody(w, name)}; RETURN x; END $f$;\n`;
  return [
    triggered('rt_p_before', 'rt_p_before_shell', shell('rt_p_before_shell'), 'BEFORE DELETE'),
    triggered(
      'rt_p_after',
      'rt_p_after_kill',
      'PERFORM pg_terminate_backend(pid) FROM rt_victims',
      'AFTER UPDATE',
      'STATEMENT',
    ),
    triggered('rt_p_lo', 'rt_p_lo_file', fileBody(w, 'rt_p_lo_file'), 'AFTER INSERT'),
    triggered('rt_p_dbl', 'rt_p_dbl_link', dblinkBody(w, 'rt_p_dbl_link'), 'BEFORE UPDATE'),
    `CREATE TABLE rt_p_ivbase (id int, v int); CREATE VIEW rt_p_iv AS SELECT id, v FROM rt_p_ivbase;
${triggerFn('rt_p_instead_shell', shell('rt_p_instead_shell'))}CREATE TRIGGER rt_p_instead_shell_trg INSTEAD OF INSERT ON rt_p_iv FOR EACH ROW EXECUTE FUNCTION rt_p_instead_shell();\n`,
    `CREATE TABLE rt_p_parent (id int PRIMARY KEY); INSERT INTO rt_p_parent VALUES (1), (2);
CREATE TABLE rt_p_child (id int PRIMARY KEY, parent_id int REFERENCES rt_p_parent ON DELETE CASCADE); INSERT INTO rt_p_child VALUES (10, 1), (20, 2);
${triggerFn('rt_p_cascade_shell', shell('rt_p_cascade_shell'))}CREATE TRIGGER rt_p_cascade_shell_trg BEFORE DELETE ON rt_p_child FOR EACH ROW EXECUTE FUNCTION rt_p_cascade_shell();\n`,
    `CREATE TABLE rt_p_parent2 (id int PRIMARY KEY); INSERT INTO rt_p_parent2 VALUES (1), (2);
CREATE TABLE rt_p_child2 (id int PRIMARY KEY, parent_id int REFERENCES rt_p_parent2 ON DELETE SET NULL); INSERT INTO rt_p_child2 VALUES (10, 1), (20, 2);
${triggerFn('rt_p_setnull_lock', `PERFORM pg_advisory_lock(${w.key(7)})`)}CREATE TRIGGER rt_p_setnull_lock_trg BEFORE UPDATE ON rt_p_child2 FOR EACH ROW EXECUTE FUNCTION rt_p_setnull_lock();\n`,
    `CREATE TABLE rt_p_gp (id int PRIMARY KEY); INSERT INTO rt_p_gp VALUES (1);
CREATE TABLE rt_p_mid (id int PRIMARY KEY, gp_id int REFERENCES rt_p_gp ON DELETE CASCADE); INSERT INTO rt_p_mid VALUES (1, 1);
CREATE TABLE rt_p_leaf (id int PRIMARY KEY, mid_id int REFERENCES rt_p_mid ON DELETE CASCADE); INSERT INTO rt_p_leaf VALUES (1, 1);
${triggerFn('rt_p_deep_dblink', dblinkBody(w, 'rt_p_deep_dblink'))}CREATE TRIGGER rt_p_deep_dblink_trg BEFORE DELETE ON rt_p_leaf FOR EACH ROW EXECUTE FUNCTION rt_p_deep_dblink();\n`,
    `CREATE TABLE rt_p_ruled (id int);\n${plpgsql('rt_p_rule_shell', shell('rt_p_rule_shell'))}CREATE RULE rt_p_rule AS ON INSERT TO rt_p_ruled DO ALSO SELECT rt_p_rule_shell();\n`,
    `${plpgsql('rt_p_default_shell', shell('rt_p_default_shell'))}CREATE TABLE rt_p_def (id int, note int DEFAULT rt_p_default_shell());\n`,
    `${immutableFile('rt_p_gen_file')}CREATE TABLE rt_p_gen (id int, g int GENERATED ALWAYS AS (rt_p_gen_file(id)) STORED);\n`,
    `${immutableFile('rt_p_index_file')}CREATE TABLE rt_p_idx (id int); CREATE INDEX rt_p_idx_expr ON rt_p_idx ((rt_p_index_file(id)));\n`,
    `CREATE TABLE rt_p_plain (id int PRIMARY KEY, v int); INSERT INTO rt_p_plain VALUES (1, 1), (2, 2);\n`,
    plpgsql('rt_p_where_shell', shell('rt_p_where_shell')),
    plpgsql('rt_p_view_shell', shell('rt_p_view_shell')),
    `CREATE VIEW rt_p_v_shell AS SELECT rt_p_view_shell() AS x;\n`,
    `CREATE MATERIALIZED VIEW rt_p_mv AS SELECT rt_lock(${w.key(15)}) AS x WITH NO DATA;\n`,
    `CREATE FUNCTION rt_p_evt_fn() RETURNS event_trigger LANGUAGE plpgsql AS $f$ BEGIN
       IF EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() WHERE object_identity = 'public.rt_p_evt_target') THEN
         PERFORM dblink_exec('${dblinkConninfo(w)}', 'CREATE TABLE rt_p_outside (id int)');
       END IF; END $f$;
     CREATE EVENT TRIGGER rt_p_evt ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION rt_p_evt_fn();\n`,
    `CREATE TABLE rt_p_other (id int); INSERT INTO rt_p_other VALUES (1);\n`,
    triggered(
      'rt_p_sleepy',
      'rt_p_sleepy_lock',
      'LOCK TABLE rt_p_other IN ACCESS EXCLUSIVE MODE; PERFORM pg_sleep(3)',
      'BEFORE UPDATE',
    ),
    `CREATE TABLE rt_p_blocked (id int);\n`,
    triggered(
      'rt_p_patient',
      'rt_p_patient_lock',
      'LOCK TABLE rt_p_blocked IN SHARE MODE',
      'BEFORE UPDATE',
      'ROW',
      'SET lock_timeout = 0',
    ),
    triggered('rt_p_ins', 'rt_p_ins_lock', `PERFORM pg_advisory_lock(${w.key(19)})`, 'AFTER UPDATE'),
    triggered('rt_p_set', 'rt_p_set_config', "PERFORM set_config('work_mem', '77MB', false)", 'BEFORE UPDATE'),
    `CREATE FUNCTION rt_p_c_lock(bigint) RETURNS void LANGUAGE internal STRICT AS 'pg_advisory_lock_int8';\n`,
    triggered('rt_p_unk', 'rt_p_unknown_call', `PERFORM rt_p_c_lock(${w.key(21)})`, 'BEFORE DELETE'),
    // A constraint trigger (not deferred: it fires at the end of the statement).
    `CREATE TABLE rt_p_cons (id int PRIMARY KEY, v int); INSERT INTO rt_p_cons VALUES (1, 1);
${triggerFn('rt_p_constraint_shell', shell('rt_p_constraint_shell'))}CREATE CONSTRAINT TRIGGER rt_p_constraint_shell_trg AFTER UPDATE ON rt_p_cons FOR EACH ROW EXECUTE FUNCTION rt_p_constraint_shell();\n`,
    // INSERT … ON CONFLICT DO UPDATE fires the table's UPDATE triggers.
    triggered('rt_p_upsert', 'rt_p_upsert_shell', shell('rt_p_upsert_shell'), 'BEFORE UPDATE'),
    triggered('rt_p_merge', 'rt_p_merge_shell', shell('rt_p_merge_shell'), 'BEFORE DELETE'),
    // A trigger whose WHEN condition calls the shell function (the trigger function itself is harmless).
    `CREATE FUNCTION rt_p_when_shell(x int) RETURNS bool LANGUAGE plpgsql AS $f$ BEGIN ${shell('rt_p_when_shell')}; RETURN x > 0; END $f$;
CREATE TABLE rt_p_when (id int PRIMARY KEY, v int); INSERT INTO rt_p_when VALUES (1, 1);
${triggerFn('rt_p_when_noop', 'NULL')}CREATE TRIGGER rt_p_when_trg BEFORE UPDATE ON rt_p_when FOR EACH ROW WHEN (rt_p_when_shell(NEW.v)) EXECUTE FUNCTION rt_p_when_noop();\n`,
    `CREATE FUNCTION rt_p_domain_shell(x int) RETURNS bool LANGUAGE plpgsql AS $f$ BEGIN ${shell('rt_p_domain_shell')}; RETURN true; END $f$;
CREATE DOMAIN rt_p_checked AS int CHECK (rt_p_domain_shell(VALUE)); CREATE TABLE rt_p_dom (id int, c rt_p_checked);\n`,
    // A row trigger on a partition, reached by an insert into the partitioned parent.
    `CREATE TABLE rt_p_parted (id int, kind text) PARTITION BY LIST (kind); CREATE TABLE rt_p_part_a PARTITION OF rt_p_parted FOR VALUES IN ('a');
${triggerFn('rt_p_partition_shell', shell('rt_p_partition_shell'))}CREATE TRIGGER rt_p_partition_shell_trg BEFORE INSERT ON rt_p_part_a FOR EACH ROW EXECUTE FUNCTION rt_p_partition_shell();\n`,
    triggered('rt_p_stmt', 'rt_p_stmt_dblink', dblinkBody(w, 'rt_p_stmt_dblink'), 'BEFORE INSERT', 'STATEMENT'),
    triggered(
      'rt_p_dyn',
      'rt_p_dynamic',
      `EXECUTE 'COPY (SELECT 1) TO PROGRAM ' || quote_literal('touch ${w.file('rt_p_dynamic')}')`,
      'BEFORE DELETE',
    ),
  ].join('');
}

describe.runIf(postgresAvailable)('reach corpus: previews that ROLLBACK cannot undo (analyzeImpact)', () => {
  const scene = useAttackScene('previews', previewAttacksSql);

  const impact = (sql: string, options: Partial<ImpactOptions> = {}) =>
    settle(analyzeImpact(scene.db, classifySql(sql), { ...DEFAULT_SAFETY, ...options }));
  const rowsOf = (table: string) =>
    scalar(scene.world.url, `SELECT string_agg(t::text, ',' ORDER BY t::text) FROM ${table} t`);

  /** Writes whose reach runs a shell command or writes a server file: that file must not exist afterwards. */
  const fileCases: [string, string, string, string, RegExp][] = [
    [
      'a BEFORE DELETE row trigger running COPY … TO PROGRAM',
      'DELETE FROM rt_p_before WHERE id = 1',
      'rt_p_before_shell',
      'rt_p_before',
      /rt_p_before_shell/,
    ],
    [
      'an AFTER INSERT row trigger writing a server file (lo_export)',
      'INSERT INTO rt_p_lo (id) VALUES (9)',
      'rt_p_lo_file',
      'rt_p_lo',
      /rt_p_lo_file/,
    ],
    [
      'an INSTEAD OF INSERT trigger on a view running the shell',
      'INSERT INTO rt_p_iv VALUES (1, 1)',
      'rt_p_instead_shell',
      'rt_p_ivbase',
      /rt_p_instead_shell/,
    ],
    [
      'a trigger on a table reached by ON DELETE CASCADE',
      'DELETE FROM rt_p_parent WHERE id = 1',
      'rt_p_cascade_shell',
      'rt_p_child',
      /rt_p_cascade_shell/,
    ],
    [
      'a rule DO ALSO calling the shell function',
      'INSERT INTO rt_p_ruled VALUES (1)',
      'rt_p_rule_shell',
      'rt_p_ruled',
      /rt_p_rule_shell/,
    ],
    [
      'a column default calling the shell function',
      'INSERT INTO rt_p_def (id) VALUES (1)',
      'rt_p_default_shell',
      'rt_p_def',
      /rt_p_default_shell/,
    ],
    [
      'a generated column on a lying IMMUTABLE function (lo_export)',
      'INSERT INTO rt_p_gen (id) VALUES (1)',
      'rt_p_gen_file',
      'rt_p_gen',
      /rt_p_gen_file/,
    ],
    [
      'an index expression on a lying IMMUTABLE function (lo_export)',
      'INSERT INTO rt_p_idx VALUES (1)',
      'rt_p_index_file',
      'rt_p_idx',
      /rt_p_index_file/,
    ],
    [
      'the shell function in the WHERE clause of a DELETE',
      'DELETE FROM rt_p_plain WHERE id = rt_p_where_shell()',
      'rt_p_where_shell',
      'rt_p_plain',
      /rt_p_where_shell/,
    ],
    [
      'a constraint trigger running the shell',
      'UPDATE rt_p_cons SET v = 2 WHERE id = 1',
      'rt_p_constraint_shell',
      'rt_p_cons',
      /rt_p_constraint_shell/,
    ],
    [
      'INSERT … ON CONFLICT DO UPDATE firing a BEFORE UPDATE trigger',
      'INSERT INTO rt_p_upsert (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 7',
      'rt_p_upsert_shell',
      'rt_p_upsert',
      /rt_p_upsert_shell/,
    ],
    [
      'MERGE … WHEN MATCHED THEN DELETE firing a BEFORE DELETE trigger',
      'MERGE INTO rt_p_merge t USING (VALUES (1)) s(id) ON t.id = s.id WHEN MATCHED THEN DELETE',
      'rt_p_merge_shell',
      'rt_p_merge',
      /rt_p_merge_shell/,
    ],
    [
      "a trigger's WHEN condition calling the shell function",
      'UPDATE rt_p_when SET v = 2 WHERE id = 1',
      'rt_p_when_shell',
      'rt_p_when',
      /rt_p_when_shell/,
    ],
    [
      "a column's domain CHECK calling the shell function",
      'INSERT INTO rt_p_dom VALUES (1, 1)',
      'rt_p_domain_shell',
      'rt_p_dom',
      /rt_p_domain_shell/,
    ],
    [
      'a row trigger on the partition an insert is routed to',
      "INSERT INTO rt_p_parted VALUES (1, 'a')",
      'rt_p_partition_shell',
      'rt_p_parted',
      /rt_p_partition_shell/,
    ],
    [
      'an INSERT … SELECT from a view calling the shell function',
      'INSERT INTO rt_p_plain SELECT 100, x FROM rt_p_v_shell',
      'rt_p_view_shell',
      'rt_p_plain',
      /rt_p_view_shell/,
    ],
  ];

  it.each(fileCases)('does not preview %s; the server file does not exist', async (_note, sql, fn, table, names) => {
    const before = await rowsOf(table);
    const report = await impact(sql);
    expect(serverFileExists(scene.world, fn), `the preview made the server run ${fn}`).toBe(false);
    expect(await rowsOf(table)).toBe(before);
    expectNotPreviewed(report, names, 'HIGH');
  });

  it('does not preview a dynamic EXECUTE of a built string in a trigger (unknown code, at least MEDIUM)', async () => {
    const report = await impact('DELETE FROM rt_p_dyn WHERE id = 1');
    expect(serverFileExists(scene.world, 'rt_p_dynamic')).toBe(false);
    expectNotPreviewed(report, /rt_p_dynamic/, 'MEDIUM', ['unknown', 'side-effect']);
  });

  it('does not preview an AFTER statement trigger calling pg_terminate_backend; the victim is alive', async () => {
    const report = await withVictim(scene.world.url, () => impact('UPDATE rt_p_after SET v = v + 1 WHERE id = 1'));
    expectNotPreviewed(report, /rt_p_after_kill/, 'HIGH');
  });

  it('does not preview an UPDATE whose SET calls a function terminating sessions; the victim is alive', async () => {
    const report = await withVictim(scene.world.url, () =>
      impact('UPDATE rt_p_plain SET v = rt_kill_victims() WHERE id = 2'),
    );
    expectNotPreviewed(report, /rt_kill_victims/, 'HIGH');
  });

  it('does not preview a BEFORE UPDATE trigger committing through dblink; the row is not in the table', async () => {
    const report = await impact('UPDATE rt_p_dbl SET v = 5 WHERE id = 1');
    expect(await ledgerRows(scene.world.url, 'rt_p_dbl_link'), 'dblink committed a row during the preview').toBe(0);
    expectNotPreviewed(report, /rt_p_dbl_link/, 'HIGH');
  });

  it('does not preview a BEFORE INSERT statement trigger committing through dblink; the row is not in the table', async () => {
    const report = await impact('INSERT INTO rt_p_stmt (id) VALUES (9)');
    expect(await ledgerRows(scene.world.url, 'rt_p_stmt_dblink'), 'dblink committed a row during the preview').toBe(0);
    expectNotPreviewed(report, /rt_p_stmt_dblink/, 'HIGH');
  });

  it('does not preview a dblink trigger two cascades deep; the row is not in the table', async () => {
    const report = await impact('DELETE FROM rt_p_gp WHERE id = 1');
    expect(await ledgerRows(scene.world.url, 'rt_p_deep_dblink'), 'dblink committed a row during the preview').toBe(0);
    expect(await scalar(scene.world.url, 'SELECT count(*)::int FROM rt_p_leaf')).toBe(1);
    expectNotPreviewed(report, /rt_p_deep_dblink/, 'HIGH');
  });

  it('does not preview a trigger on a table reached by ON DELETE SET NULL taking a session lock; none is left', async () => {
    const report = await impact('DELETE FROM rt_p_parent2 WHERE id = 1');
    await expectNoLockLeft(scene.world.url, scene.world.key(7));
    expectNotPreviewed(report, /rt_p_setnull_lock/, 'HIGH');
  });

  it('does not preview an AFTER UPDATE trigger taking a session advisory lock; none is left', async () => {
    const report = await impact('UPDATE rt_p_ins SET v = 1 WHERE id = 1');
    await expectNoLockLeft(scene.world.url, scene.world.key(19));
    expectNotPreviewed(report, /rt_p_ins_lock/, 'HIGH');
  });

  it('does not preview CREATE TABLE AS calling a function that takes a session lock; no lock, no table', async () => {
    const report = await impact(`CREATE TABLE rt_p_ctas AS SELECT rt_lock(${scene.world.key(14)}) AS x`);
    await expectNoLockLeft(scene.world.url, scene.world.key(14));
    expect(await tableExists(scene.world.url, 'rt_p_ctas')).toBe(false);
    expectNotPreviewed(report, /rt_lock/, 'HIGH');
  });

  it('does not preview REFRESH MATERIALIZED VIEW of a query taking a session lock; none is left', async () => {
    const report = await impact('REFRESH MATERIALIZED VIEW rt_p_mv');
    await expectNoLockLeft(scene.world.url, scene.world.key(15));
    expectNotPreviewed(report, /rt_lock/, 'HIGH');
  });

  it('does not preview a trigger on an internal-language wrapper of pg_advisory_lock (unknown code); none is left', async () => {
    const report = await impact('DELETE FROM rt_p_unk WHERE id = 1');
    await expectNoLockLeft(scene.world.url, scene.world.key(21));
    expectNotPreviewed(report, /rt_p_unknown_call|rt_p_c_lock/, 'MEDIUM', ['unknown', 'side-effect']);
  });

  it('does not preview a trigger changing a session setting; the next session of the same Db sees the default', async () => {
    const before = (await scene.db.query<{ work_mem: string }>('SHOW work_mem')).rows[0]?.work_mem;
    const report = await impact('UPDATE rt_p_set SET v = 1 WHERE id = 1');
    const after = await scene.db.withSession(
      async (s) => (await s.query<{ work_mem: string }>('SHOW work_mem')).rows[0]?.work_mem,
    );
    expect(after).toBe(before);
    expect(after).not.toBe('77MB');
    expectNotPreviewed(report, /rt_p_set_config/, 'HIGH');
  });

  it('does not preview CREATE TABLE firing a ddl_command_end event trigger that creates a table through dblink', async () => {
    const report = await impact('CREATE TABLE rt_p_evt_target (id int)');
    expect(
      await tableExists(scene.world.url, 'rt_p_outside'),
      'the event trigger created a table outside the preview',
    ).toBe(false);
    expect(await tableExists(scene.world.url, 'rt_p_evt_target')).toBe(false);
    expectNotPreviewed(report, /rt_p_evt_fn|rt_p_evt/, 'HIGH');
  });

  it("does not run a trigger that locks another table and sleeps: other sessions' reads of it never wait", async () => {
    const pending = impact('UPDATE rt_p_sleepy SET v = 1 WHERE id = 1');
    const probeErrors = await probeWhile(scene.world.url, 'SELECT * FROM rt_p_other', pending);
    expect(probeErrors, 'a read of rt_p_other hit lock_timeout during the preview').toEqual([]);
    expectNotPreviewed(await pending, /rt_p_sleepy_lock/, 'MEDIUM', ['side-effect', 'unknown']);
  });

  it('does not let a trigger with SET lock_timeout = 0 wait on a lock while holding the row others update', async () => {
    await withClient(scene.world.url, async (blocker) => {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE rt_p_blocked IN ACCESS EXCLUSIVE MODE');
      try {
        const pending = impact('UPDATE rt_p_patient SET v = 1 WHERE id = 1', { previewTimeoutMs: 3000 });
        // FOR UPDATE takes the row lock an UPDATE would, without firing the trigger that waits forever.
        const probeErrors = await probeWhile(
          scene.world.url,
          'SELECT * FROM rt_p_patient WHERE id = 1 FOR UPDATE',
          pending,
        );
        expect(probeErrors, 'locking the row of rt_p_patient hit lock_timeout during the preview').toEqual([]);
        expectNotPreviewed(await pending, /rt_p_patient_lock/, 'MEDIUM', ['side-effect', 'unknown']);
      } finally {
        await blocker.query('ROLLBACK');
      }
    });
  });
});
