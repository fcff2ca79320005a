// Issue 21 / SPEC §5 1a on the EXPLAIN and direct read paths (`explainRead`, `explainReadOnly`, `runRead`):
// planning evaluates IMMUTABLE functions with constant arguments, so a lying IMMUTABLE label runs its code
// during EXPLAIN; for a statement whose reach has a side effect or unknown code these reject with
// SQL_REFUSED and nothing ran — asserted on pg_locks, another session's lock, the server file, the victim.
import { describe, expect, it } from 'vitest';
import { explainRead, explainReadOnly } from '../../../../src/core/sql/explainPlan';
import { runRead } from '../../../../src/core/sql/runRead';
import type { AttackWorld } from '../../../support/reachAttacks';
import {
  expectNoLockLeft,
  expectRefused,
  fileBody,
  plpgsql,
  serverFileExists,
  settle,
  shellBody,
  useAttackScene,
  withVictim,
} from '../../../support/reachAttacks';
import { postgresAvailable } from '../../../support/services';

const LIMITS = { maxRows: 100, statementTimeoutMs: 5000, lockTimeoutMs: 1000 };

function explainAttacksSql(w: AttackWorld): string {
  return [
    `CREATE FUNCTION rt_e_imm_lock(k bigint) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN PERFORM pg_advisory_lock(k); RETURN 1; END $f$;\n`,
    `CREATE FUNCTION rt_e_imm_file(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN ${fileBody(w, 'rt_e_imm_file')}; RETURN x; END $f$;\n`,
    `CREATE VIEW rt_e_v_lock AS SELECT rt_e_imm_lock(${w.key(3)}) AS x;\n`,
    `CREATE FUNCTION rt_e_op_lock(a int, k bigint) RETURNS bool LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN PERFORM pg_advisory_lock(k); RETURN true; END $f$;\n`,
    `CREATE OPERATOR ==== (LEFTARG = int, RIGHTARG = bigint, FUNCTION = rt_e_op_lock);\n`,
    `CREATE TYPE rt_e_token AS (v text);\n`,
    `CREATE FUNCTION rt_e_cast_file(t text) RETURNS rt_e_token LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN ${fileBody(w, 'rt_e_cast_file')}; RETURN ROW(t)::rt_e_token; END $f$;\n`,
    `CREATE CAST (text AS rt_e_token) WITH FUNCTION rt_e_cast_file(text);\n`,
    `CREATE FUNCTION rt_e_imm_outer(k bigint) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT rt_e_imm_lock(k) + 1';\n`,
    plpgsql('rt_e_shell', shellBody(w, 'rt_e_shell')),
    `CREATE VIEW rt_e_v_kill AS SELECT pg_terminate_backend(pid) AS killed FROM rt_victims;\n`,
  ].join('');
}

describe.runIf(postgresAvailable)('reach corpus: EXPLAIN and direct reads never run code with effects', () => {
  const scene = useAttackScene('explain', explainAttacksSql);

  it('refuses to explain a lying IMMUTABLE function taking a session lock (planning would fold it); no lock left', async () => {
    const key = scene.world.key(1);
    const outcome = await settle(explainRead(scene.db, `SELECT rt_e_imm_lock(${key})`, LIMITS));
    await expectNoLockLeft(scene.world.url, key);
    expectRefused(outcome);
  });

  it('refuses explainReadOnly (JSON) of a lying IMMUTABLE function writing a server file; no file', async () => {
    const outcome = await settle(explainReadOnly(scene.db, 'SELECT rt_e_imm_file(1)', 'json', LIMITS));
    expect(serverFileExists(scene.world, 'rt_e_imm_file'), 'planning ran lo_export').toBe(false);
    expectRefused(outcome);
  });

  it('refuses to explain a view whose lying IMMUTABLE call is folded while planning; no lock left', async () => {
    const outcome = await settle(explainRead(scene.db, 'SELECT x FROM rt_e_v_lock', LIMITS));
    await expectNoLockLeft(scene.world.url, scene.world.key(3));
    expectRefused(outcome);
  });

  it('refuses to explain a user operator on a lying IMMUTABLE function; no lock left', async () => {
    const key = scene.world.key(4);
    const outcome = await settle(explainRead(scene.db, `SELECT 1 ==== ${key}::bigint`, LIMITS));
    await expectNoLockLeft(scene.world.url, key);
    expectRefused(outcome);
  });

  it('refuses explainReadOnly (text) of a cast WITH FUNCTION on a lying IMMUTABLE function; no file', async () => {
    const outcome = await settle(explainReadOnly(scene.db, "SELECT 'x'::text::rt_e_token", 'text', LIMITS));
    expect(serverFileExists(scene.world, 'rt_e_cast_file'), 'planning ran lo_export').toBe(false);
    expectRefused(outcome);
  });

  it('refuses to explain an IMMUTABLE sql function calling the locking one (nested); no lock left', async () => {
    const key = scene.world.key(6);
    const outcome = await settle(explainRead(scene.db, `SELECT rt_e_imm_outer(${key})`, LIMITS));
    await expectNoLockLeft(scene.world.url, key);
    expectRefused(outcome);
  });

  it('runRead refuses a statement calling the shell function; no file', async () => {
    const outcome = await settle(runRead(scene.db, 'SELECT rt_e_shell()', true, LIMITS));
    expect(serverFileExists(scene.world, 'rt_e_shell'), 'runRead ran the shell command').toBe(false);
    expectRefused(outcome);
  });

  it('runRead refuses a function taking a session lock; no lock left', async () => {
    const key = scene.world.key(8);
    const outcome = await settle(runRead(scene.db, `SELECT rt_lock(${key})`, true, LIMITS));
    await expectNoLockLeft(scene.world.url, key);
    expectRefused(outcome);
  });

  it('runRead refuses a view calling pg_terminate_backend; the victim is alive', async () => {
    const outcome = await withVictim(scene.world.url, () =>
      settle(runRead(scene.db, 'SELECT * FROM rt_e_v_kill', true, LIMITS)),
    );
    expectRefused(outcome);
  });

  it('runRead refuses text holding a second statement after a plain read (simple query text would run both); no file', async () => {
    const outcome = await settle(runRead(scene.db, 'SELECT 1; SELECT rt_e_shell()', false, LIMITS));
    expect(serverFileExists(scene.world, 'rt_e_shell'), 'the second statement ran the shell command').toBe(false);
    expectRefused(outcome);
  });
});
