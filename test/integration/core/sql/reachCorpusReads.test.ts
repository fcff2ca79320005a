// Issue 21 / SPEC §5 1a on the read path (`runSql`, what `pg-agent sql` runs): a "read" whose reach into the
// database's own code has a side effect or unknown code is held like a write, its reasons naming the
// function, and nothing ran — asserted on the server: the file the shell command would touch, the large
// object export, the victim session, pg_locks and another session's lock, dblink's committed row, settings.
import { describe, expect, it } from 'vitest';
import type { AttackWorld } from '../../../support/reachAttacks';
import {
  dblinkBody,
  dblinkConninfo,
  expectHeldRead,
  expectNoLockLeft,
  expectNotExecuted,
  fileBody,
  ledgerRows,
  openAs,
  plpgsql,
  scalar,
  sequencePosition,
  serverFileExists,
  shellBody,
  useAttackScene,
  withVictim,
} from '../../../support/reachAttacks';
import { postgresAvailable } from '../../../support/services';

/** The attacker's objects for this file; every shell/file function writes a file of its own name. */
function readAttacksSql(w: AttackWorld): string {
  const shell = (name: string) => plpgsql(name, shellBody(w, name));
  const shellReturning = (name: string, args: string, returns: string, value: string) =>
    `CREATE FUNCTION ${name}(${args}) RETURNS ${returns} LANGUAGE plpgsql AS $f$ BEGIN ${shellBody(w, name)}; RETURN ${value}; END $f$;\n`;
  return [
    shell('rt_r_shell'),
    shell('rt_r_sql_inner'),
    `CREATE FUNCTION rt_r_sql_wrap() RETURNS int LANGUAGE sql AS 'SELECT rt_r_sql_inner()';\n`,
    shell('rt_r_deep3'),
    `CREATE FUNCTION rt_r_deep2() RETURNS int LANGUAGE sql AS 'SELECT rt_r_deep3()';\n`,
    plpgsql('rt_r_deep1', 'PERFORM rt_r_deep2()'),
    `CREATE FUNCTION rt_r_exec(cmd text) RETURNS int LANGUAGE plpgsql AS $f$ BEGIN EXECUTE cmd; RETURN 1; END $f$;\n`,
    // A user-named wrapper of a built-in with a side effect: no name list can see it (LANGUAGE internal).
    `CREATE FUNCTION rt_r_c_lock(bigint) RETURNS void LANGUAGE internal STRICT AS 'pg_advisory_lock_int8';\n`,
    `CREATE FUNCTION rt_r_imm_lock(k bigint) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN PERFORM pg_advisory_lock(k); RETURN 1; END $f$;\n`,
    `CREATE FUNCTION rt_r_sql_lock(k bigint) RETURNS void LANGUAGE sql AS 'SELECT pg_advisory_lock(k)';\n`,
    `CREATE FUNCTION rt_r_op_lock(a int, b bigint) RETURNS bool LANGUAGE plpgsql AS $f$ BEGIN PERFORM pg_advisory_lock(b); RETURN true; END $f$;\n`,
    `CREATE OPERATOR === (LEFTARG = int, RIGHTARG = bigint, FUNCTION = rt_r_op_lock);\n`,
    shellReturning('rt_r_op_shell', 'a text, b text', 'bool', 'true'),
    `CREATE OPERATOR ~~~ (LEFTARG = text, RIGHTARG = text, FUNCTION = rt_r_op_shell);\n`,
    `CREATE TYPE rt_token AS (v text);\n`,
    shellReturning('rt_r_cast_shell', 't text', 'rt_token', 'ROW(t)::rt_token'),
    `CREATE CAST (text AS rt_token) WITH FUNCTION rt_r_cast_shell(text);\n`,
    shellReturning('rt_r_dom_shell', 'v int', 'bool', 'true'),
    `CREATE DOMAIN rt_checked AS int CHECK (rt_r_dom_shell(VALUE));\n`,
    shell('rt_r_view_shell'),
    `CREATE VIEW rt_v_shell AS SELECT rt_r_view_shell() AS x;\n`,
    shell('rt_r_vv_shell'),
    `CREATE VIEW rt_v_inner AS SELECT rt_r_vv_shell() AS x;\nCREATE VIEW rt_vv AS SELECT x FROM rt_v_inner;\n`,
    `CREATE VIEW rt_v_lock AS SELECT rt_lock(${w.key(3)}) AS x;\n`,
    // A view calling a side-effect built-in directly: the parser sees only "SELECT * FROM rt_v_kill".
    `CREATE VIEW rt_v_kill AS SELECT pg_terminate_backend(pid) AS killed FROM rt_victims;\n`,
    plpgsql('rt_r_dblink', dblinkBody(w, 'rt_r_dblink')),
    plpgsql('rt_r_file', fileBody(w, 'rt_r_file')),
    // A named dblink connection outlives the transaction: another backend left open behind the pooled session.
    plpgsql(
      'rt_r_dblink_open',
      `PERFORM dblink_connect('rt_conn', '${dblinkConninfo(w)} application_name=rt_dblink_${w.token}')`,
    ),
    `CREATE FUNCTION rt_r_kill(p int) RETURNS bool LANGUAGE sql AS 'SELECT pg_terminate_backend(p)';\n`,
    plpgsql('rt_r_setting', "PERFORM set_config('work_mem', '77MB', false)"),
    shell('rt_r_where'),
    shell('rt_r_cte'),
    shell('rt_r_from'),
    `CREATE TABLE rt_r_plain (id int PRIMARY KEY); INSERT INTO rt_r_plain VALUES (1), (2), (3);\n`,
    shellReturning('rt_r_agg_step', 's int, v int', 'int', 's + v'),
    `CREATE AGGREGATE rt_r_agg(int) (SFUNC = rt_r_agg_step, STYPE = int, INITCOND = '0');\n`,
    `CREATE VIEW rt_v_hba AS SELECT * FROM pg_hba_file_rules;\n`,
    plpgsql('rt_r_write', "INSERT INTO rt_ledger VALUES ('rt_r_write')"),
    `CREATE SEQUENCE rt_r_seq;\n`,
    plpgsql('rt_r_next', "PERFORM nextval('rt_r_seq')"),
    // RLS: the policy calls a SECURITY DEFINER function owned by the superuser, so a plain role's read runs it.
    shellReturning('rt_r_rls_shell', '', 'bool', 'true').replace(
      'LANGUAGE plpgsql',
      'LANGUAGE plpgsql SECURITY DEFINER',
    ),
    shellReturning('rt_r_rls_forced', '', 'bool', 'true').replace(
      'LANGUAGE plpgsql',
      'LANGUAGE plpgsql SECURITY DEFINER',
    ),
    `CREATE ROLE ${w.role('rt_reader')} LOGIN; CREATE ROLE ${w.role('rt_owner')} LOGIN;\n`,
    `CREATE TABLE rt_rls (id int); INSERT INTO rt_rls VALUES (1); ALTER TABLE rt_rls ENABLE ROW LEVEL SECURITY;
     CREATE POLICY rt_rls_p ON rt_rls USING (rt_r_rls_shell()); GRANT SELECT ON rt_rls TO ${w.role('rt_reader')};\n`,
    `CREATE TABLE rt_rls_forced (id int); INSERT INTO rt_rls_forced VALUES (1); ALTER TABLE rt_rls_forced OWNER TO ${w.role('rt_owner')};
     ALTER TABLE rt_rls_forced ENABLE ROW LEVEL SECURITY; ALTER TABLE rt_rls_forced FORCE ROW LEVEL SECURITY;
     CREATE POLICY rt_rls_forced_p ON rt_rls_forced USING (rt_r_rls_forced());\n`,
  ].join('');
}

describe.runIf(postgresAvailable)('reach corpus: reads that are not reads (runSql)', () => {
  const scene = useAttackScene('reads', readAttacksSql, ['rt_reader', 'rt_owner']);
  const { read } = scene;

  /** Cases whose reach runs a shell command: the file named after the function must not exist afterwards. */
  const shellCases: [string, string, string, RegExp][] = [
    ['a plpgsql function running COPY … TO PROGRAM', 'SELECT rt_r_shell()', 'rt_r_shell', /rt_r_shell/],
    [
      'a LANGUAGE sql function calling the shell function',
      'SELECT rt_r_sql_wrap()',
      'rt_r_sql_inner',
      /rt_r_sql_wrap|rt_r_sql_inner/,
    ],
    ['nested calls three deep (plpgsql → sql → plpgsql)', 'SELECT rt_r_deep1()', 'rt_r_deep3', /rt_r_deep[123]/],
    [
      'a user operator whose function runs the shell',
      "SELECT 'a'::text ~~~ 'b'::text",
      'rt_r_op_shell',
      /rt_r_op_shell|~~~/,
    ],
    ['a cast WITH FUNCTION that runs the shell', "SELECT 'x'::text::rt_token", 'rt_r_cast_shell', /rt_r_cast_shell/],
    [
      "a domain's CHECK calling the shell function",
      'SELECT 3::rt_checked',
      'rt_r_dom_shell',
      /rt_r_dom_shell|rt_checked/,
    ],
    ['a view calling the shell function', 'SELECT * FROM rt_v_shell', 'rt_r_view_shell', /rt_r_view_shell|rt_v_shell/],
    [
      'a view of a view calling the shell function',
      'SELECT x FROM rt_vv',
      'rt_r_vv_shell',
      /rt_r_vv_shell|rt_vv|rt_v_inner/,
    ],
    [
      'the shell function in a WHERE clause',
      'SELECT id FROM rt_r_plain WHERE rt_r_where() = 1',
      'rt_r_where',
      /rt_r_where/,
    ],
    ['the shell function in a CTE', 'WITH x AS (SELECT rt_r_cte() AS v) SELECT v FROM x', 'rt_r_cte', /rt_r_cte/],
    ['the shell function in FROM', 'SELECT * FROM rt_r_from()', 'rt_r_from', /rt_r_from/],
    [
      'a user aggregate whose state function runs the shell',
      'SELECT rt_r_agg(id) FROM rt_r_plain',
      'rt_r_agg_step',
      /rt_r_agg/,
    ],
  ];

  it.each(shellCases)('holds %s; the server ran no shell command', async (_note, sql, fn, names) => {
    const outcome = await read(sql);
    expect(serverFileExists(scene.world, fn), `the server ran "touch" for ${fn}`).toBe(false);
    expectHeldRead(outcome, names);
  });

  it('holds dynamic EXECUTE of a non-constant string (unknown code); the shell command inside did not run', async () => {
    const outcome = await read(`SELECT rt_r_exec('${shellBody(scene.world, 'rt_r_exec_arg').replace(/'/g, "''")}')`);
    expect(serverFileExists(scene.world, 'rt_r_exec_arg')).toBe(false);
    expectHeldRead(outcome, /rt_r_exec/);
  });

  it('holds a LANGUAGE internal wrapper of pg_advisory_lock (unknown code); no lock is left', async () => {
    const key = scene.world.key(1);
    const outcome = await read(`SELECT rt_r_c_lock(${key})`);
    await expectNoLockLeft(scene.world.url, key);
    expectHeldRead(outcome, /rt_r_c_lock/);
  });

  it('holds a session advisory lock taken through a plpgsql function; pg_locks has none, another session takes it', async () => {
    const key = scene.world.key(2);
    const outcome = await read(`SELECT rt_lock(${key})`);
    await expectNoLockLeft(scene.world.url, key);
    expectHeldRead(outcome, /rt_lock/);
  });

  it('holds a session advisory lock taken through a view', async () => {
    const outcome = await read('SELECT * FROM rt_v_lock');
    await expectNoLockLeft(scene.world.url, scene.world.key(3));
    expectHeldRead(outcome, /rt_lock|rt_v_lock/);
  });

  it('holds a session advisory lock taken through a user operator', async () => {
    const key = scene.world.key(4);
    const outcome = await read(`SELECT 1 === ${key}::bigint`);
    await expectNoLockLeft(scene.world.url, key);
    expectHeldRead(outcome, /rt_r_op_lock|===/);
  });

  it('holds a session advisory lock taken through a LANGUAGE sql function', async () => {
    const key = scene.world.key(5);
    const outcome = await read(`SELECT rt_r_sql_lock(${key})`);
    await expectNoLockLeft(scene.world.url, key);
    expectHeldRead(outcome, /rt_r_sql_lock/);
  });

  it('holds EXPLAIN (a read on the allow-list) of a lying IMMUTABLE function that planning folds; no lock left', async () => {
    const key = scene.world.key(6);
    const outcome = await read(`EXPLAIN SELECT rt_r_imm_lock(${key})`);
    await expectNoLockLeft(scene.world.url, key);
    expectHeldRead(outcome, /rt_r_imm_lock/);
  });

  it('holds a function committing a row through dblink; the row is not in the table', async () => {
    const outcome = await read('SELECT rt_r_dblink()');
    expect(await ledgerRows(scene.world.url, 'rt_r_dblink'), 'dblink committed a row during a read').toBe(0);
    expectHeldRead(outcome, /rt_r_dblink/);
  });

  it('holds a function opening a named dblink connection; no other backend is left connected', async () => {
    const outcome = await read('SELECT rt_r_dblink_open()');
    const left = await scalar(
      scene.world.url,
      'SELECT count(*)::int FROM pg_stat_activity WHERE application_name = $1',
      [`rt_dblink_${scene.world.token}`],
    );
    expect(left, 'a dblink connection opened by a read is still connected').toBe(0);
    expectHeldRead(outcome, /rt_r_dblink_open/);
  });

  it('holds a function writing a server file with lo_export; the file does not exist', async () => {
    const outcome = await read('SELECT rt_r_file()');
    expect(serverFileExists(scene.world, 'rt_r_file'), 'lo_export wrote a server file during a read').toBe(false);
    expectHeldRead(outcome, /rt_r_file/);
  });

  it('holds a function calling pg_terminate_backend; the victim session is alive', async () => {
    const outcome = await withVictim(scene.world.url, (victim) => read(`SELECT rt_r_kill(${victim.pid})`));
    expectHeldRead(outcome, /rt_r_kill/);
  });

  it('holds a view calling pg_terminate_backend directly; the victim session is alive', async () => {
    const outcome = await withVictim(scene.world.url, () => read('SELECT * FROM rt_v_kill'));
    expectHeldRead(outcome, /pg_terminate_backend|rt_v_kill/);
  });

  it('holds a function that changes a session setting; the next session of the same Db sees the default', async () => {
    const before = (await scene.db.query<{ work_mem: string }>('SHOW work_mem')).rows[0]?.work_mem;
    const outcome = await read('SELECT rt_r_setting()');
    const after = await scene.db.withSession(
      async (s) => (await s.query<{ work_mem: string }>('SHOW work_mem')).rows[0]?.work_mem,
    );
    expect(after).toBe(before);
    expect(after).not.toBe('77MB');
    expectHeldRead(outcome, /rt_r_setting/);
  });

  it('holds a plain SELECT on a table whose RLS policy runs the shell, read by a role that is not the owner', async () => {
    const reader = await openAs(scene.world, scene.world.role('rt_reader'));
    try {
      const outcome = await read('SELECT id FROM rt_rls', reader);
      expect(serverFileExists(scene.world, 'rt_r_rls_shell'), 'the policy ran the shell for a plain SELECT').toBe(
        false,
      );
      expectHeldRead(outcome, /rt_r_rls_shell|rt_rls/);
    } finally {
      await reader.close();
    }
  });

  it('holds a plain SELECT by the owner on a table with FORCE ROW LEVEL SECURITY whose policy runs the shell', async () => {
    const owner = await openAs(scene.world, scene.world.role('rt_owner'));
    try {
      const outcome = await read('SELECT id FROM rt_rls_forced', owner);
      expect(serverFileExists(scene.world, 'rt_r_rls_forced'), 'the forced policy ran the shell').toBe(false);
      expectHeldRead(outcome, /rt_r_rls_forced|rt_rls_forced/);
    } finally {
      await owner.close();
    }
  });

  it.each([
    ['pg_hba_file_rules', 'SELECT * FROM pg_hba_file_rules'],
    ['pg_file_settings', 'SELECT * FROM pg_file_settings'],
    ['pg_ident_file_mappings', 'SELECT * FROM pg_ident_file_mappings'],
    ['pg_hba_file_rules through a user view', 'SELECT * FROM rt_v_hba'],
  ])('holds a read of the server files through %s (privileged), no rows returned', async (_note, sql) => {
    const outcome = await read(sql);
    expectHeldRead(outcome, /pg_hba_file_rules|pg_file_settings|pg_ident_file_mappings|rt_v_hba/);
  });

  // Held before reach analysis: the READ ONLY transaction stops the write (SQLSTATE 25006); it must stay not executed.
  it('never executes a function whose write READ ONLY stops; nothing written', async () => {
    const outcome = await read('SELECT rt_r_write()');
    expect(await ledgerRows(scene.world.url, 'rt_r_write')).toBe(0);
    expectNotExecuted(outcome);
  });

  // Held before reach analysis: nextval in a READ ONLY transaction fails (25006); must stay not executed.
  it('never executes a function advancing a sequence; the sequence did not move', async () => {
    const before = await sequencePosition(scene.world.url, 'rt_r_seq');
    const outcome = await read('SELECT rt_r_next()');
    expect(await sequencePosition(scene.world.url, 'rt_r_seq')).toBe(before);
    expectNotExecuted(outcome);
  });
});
