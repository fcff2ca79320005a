// The reach engine (SPEC §5 1a, issue 21) on a real PostgreSQL: what each statement makes the database's own
// code do, for every category — functions, operators, casts, domains, views, matviews, defaults, generated
// columns, RLS, indexes, triggers, rules, FK chains, event triggers, sequences, extensions — and the cache.
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { loadParser, parseSql } from '../../../../src/core/sql/parse';
import { reachOf } from '../../../../src/core/sql/reach/reachOf';
import type { StatementReach } from '../../../../src/shared/reachTypes';
import { execSql, postgresAvailable } from '../../../support/services';
import { queryValue } from '../../../support/scratchDatabase';
import { useSchemaDatabase } from '../../../support/shopDatabase';

const SCHEMA = `
CREATE EXTENSION dblink;
CREATE TABLE t (id serial PRIMARY KEY, a int DEFAULT 1, b text);
CREATE TABLE log (id int GENERATED ALWAYS AS IDENTITY, msg text);
CREATE FUNCTION add_one(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 1';
CREATE FUNCTION shout(x text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN upper(x) || '!'; END $$;
CREATE FUNCTION total(x int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT add_one(x) * 2; END;
CREATE FUNCTION rt_shell() RETURNS int LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 1) TO PROGRAM 'true'; RETURN 1; END $$;
CREATE FUNCTION rt_kill(p int) RETURNS bool LANGUAGE sql AS 'SELECT pg_terminate_backend(p)';
CREATE FUNCTION rt_file() RETURNS int LANGUAGE sql AS $$ SELECT lo_export(1, '/tmp/x') $$;
CREATE FUNCTION rt_lock(k bigint) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(k); RETURN true; END $$;
CREATE FUNCTION rt_dblink() RETURNS text LANGUAGE sql AS $$ SELECT dblink_exec('dbname=postgres', 'SELECT 1') $$;
CREATE FUNCTION rt_dynamic(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE q; END $$;
CREATE FUNCTION rt_const() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'SELECT pg_advisory_lock(7)'; END $$;
CREATE FUNCTION rt_slow() RETURNS int LANGUAGE sql SET lock_timeout = '10min' AS 'SELECT 1';
CREATE FUNCTION rt_path() RETURNS int LANGUAGE sql SET search_path = public AS 'SELECT 1';
CREATE FUNCTION rt_outer() RETURNS int LANGUAGE sql AS 'SELECT rt_shell()';
CREATE FUNCTION ping(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN IF n > 0 THEN RETURN pong(n - 1); END IF; RETURN 0; END $$;
CREATE FUNCTION pong(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN ping(n); END $$;
CREATE FUNCTION rt_default_arg(a int, k bigint DEFAULT rt_lock(8)::int) RETURNS int LANGUAGE sql AS 'SELECT a';
CREATE FUNCTION rt_writer() RETURNS int LANGUAGE sql AS $$ INSERT INTO log (msg) VALUES ('x') RETURNING 1 $$;
CREATE FUNCTION rt_next() RETURNS bigint LANGUAGE sql AS $$ SELECT nextval('t_id_seq') $$;
SET check_function_bodies = off;
CREATE FUNCTION rt_broken() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETRUN 1; END $$;
RESET check_function_bodies;
-- operator, cast, domain
CREATE FUNCTION op_lock(a int, b int) RETURNS bool LANGUAGE sql IMMUTABLE AS 'SELECT pg_try_advisory_lock(a)';
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = op_lock);
CREATE FUNCTION dom_check(x int) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(x); RETURN true; END $$;
CREATE DOMAIN locked_int AS int CHECK (dom_check(VALUE));
CREATE TYPE pair AS (a int, b int);
CREATE FUNCTION pair_to_int(p pair) RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM rt_shell(); RETURN p.a; END $$;
CREATE CAST (pair AS int) WITH FUNCTION pair_to_int(pair);
CREATE FUNCTION evil_diff(a int, b int) RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM pg_advisory_lock(6); RETURN b - a; END $$;
CREATE TYPE evil_range AS RANGE (SUBTYPE = int4, SUBTYPE_DIFF = evil_diff);
-- views
CREATE VIEW v_lock AS SELECT rt_lock(1) AS locked;
CREATE VIEW v_of_v AS SELECT * FROM v_lock;
CREATE VIEW v_plain AS SELECT id, lower(b) AS b, date_trunc('day', now()) AS d FROM t;
CREATE MATERIALIZED VIEW mv AS SELECT rt_lock(2) AS locked;
CREATE VIEW v_hba AS SELECT * FROM pg_hba_file_rules;
-- defaults, generated, index, RLS
CREATE TABLE d (id int, k bigint DEFAULT (rt_lock(3))::int, g int GENERATED ALWAYS AS (add_one(id)) STORED);
CREATE TABLE gen (id int, g bool GENERATED ALWAYS AS (op_lock(id, id)) STORED);
CREATE TABLE dom_col (id int, v locked_int);
CREATE TABLE idx (id int);
CREATE FUNCTION idx_fn(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM pg_notify('c', 'x'); RETURN x; END $$;
CREATE INDEX ON idx (idx_fn(id));
CREATE FUNCTION evil_cmp(a int, b int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM pg_advisory_lock(11); RETURN btint4cmp(a, b); END $$;
CREATE OPERATOR CLASS evil_ops FOR TYPE int USING btree AS OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 evil_cmp(int, int);
CREATE TABLE opc (id int);
CREATE INDEX ON opc (id evil_ops);
CREATE TABLE secret (id int, owner text);
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY p_read ON secret FOR SELECT USING (rt_lock(4));
-- triggers
CREATE TABLE trg (id int);
CREATE FUNCTION trg_shell() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 1) TO PROGRAM 'true'; RETURN OLD; END $$;
CREATE TRIGGER trg_before_delete BEFORE DELETE ON trg FOR EACH ROW EXECUTE FUNCTION trg_shell();
CREATE FUNCTION trg_kill() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_terminate_backend(0); RETURN NULL; END $$;
CREATE TRIGGER trg_after_update AFTER UPDATE ON trg FOR EACH STATEMENT EXECUTE FUNCTION trg_kill();
CREATE FUNCTION trg_seq() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('t_id_seq'); RETURN NEW; END $$;
CREATE TRIGGER trg_insert BEFORE INSERT ON trg FOR EACH ROW EXECUTE FUNCTION trg_seq();
CREATE TRIGGER trg_disabled BEFORE INSERT ON trg FOR EACH ROW EXECUTE FUNCTION trg_shell();
ALTER TABLE trg DISABLE TRIGGER trg_disabled;
CREATE VIEW v_trg AS SELECT id FROM trg;
CREATE FUNCTION v_trg_instead() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(9); RETURN NEW; END $$;
CREATE TRIGGER v_trg_ins INSTEAD OF INSERT ON v_trg FOR EACH ROW EXECUTE FUNCTION v_trg_instead();
CREATE TABLE ruled (id int);
CREATE RULE ruled_notify AS ON DELETE TO ruled DO ALSO NOTIFY ruled_gone;
-- FK chains two levels deep
CREATE TABLE orders (id int PRIMARY KEY);
CREATE TABLE order_items (id int PRIMARY KEY, order_id int REFERENCES orders ON DELETE CASCADE);
CREATE TABLE item_notes (id int, item_id int REFERENCES order_items ON DELETE SET NULL);
CREATE FUNCTION note_shell() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 1) TO PROGRAM 'true'; RETURN NEW; END $$;
CREATE TRIGGER note_update AFTER UPDATE ON item_notes FOR EACH ROW EXECUTE FUNCTION note_shell();
CREATE TABLE trunc_child (id int, order_id int REFERENCES orders);
CREATE FUNCTION trunc_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(5); RETURN NULL; END $$;
CREATE TRIGGER trunc_t AFTER TRUNCATE ON trunc_child FOR EACH STATEMENT EXECUTE FUNCTION trunc_fn();
-- event trigger
CREATE FUNCTION evt_fn() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN CREATE TABLE IF NOT EXISTS evt_made (id int); END $$;
CREATE EVENT TRIGGER evt_create ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION evt_fn();
`;

describe.runIf(postgresAvailable)('Reach engine on PostgreSQL', () => {
  const database = useSchemaDatabase(SCHEMA);
  beforeAll(() => loadParser());
  const reach = async (sql: string): Promise<StatementReach> => {
    const [first] = await reachOf(database.db, parseSql(sql).statements);
    if (!first) throw new Error('no reach');
    return first;
  };
  const kinds = (r: StatementReach): string[] => [...new Set(r.effects.map((e) => e.kind))];
  const reasons = (r: StatementReach): string => r.effects.map((e) => e.reason).join(' | ');

  it('finds nothing in reads of ordinary computing functions, views and built-ins', async () => {
    for (const sql of [
      "SELECT add_one(1), shout(b), total(2), lower(b), date_trunc('day', now()), count(*) FROM t GROUP BY b",
      'SELECT * FROM v_plain WHERE id = 1',
      'SELECT rt_path()',
      'SELECT * FROM mv',
      'SELECT (ROW(1, 2)::pair).a',
      'SELECT ping(3)',
    ]) {
      const r = await reach(sql);
      expect(r.effects, sql).toEqual([]);
    }
    const r = await reach('SELECT add_one(1), total(2)');
    expect(r.entries.map((e) => [e.function, e.via, e.verdict])).toEqual([
      ['public.add_one(x integer)', 'called directly', 'safe'],
      ['public.total(x integer)', 'called directly', 'safe'],
      ['public.add_one(x integer)', 'called by public.total(x integer)', 'safe'],
    ]);
  });

  it('judges functions that reach outside the transaction', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'SELECT rt_shell()',
        'irreversible',
        /public\.rt_shell\(\) runs COPY … PROGRAM \(a shell command on the server\)/,
      ],
      [
        'SELECT rt_kill(1)',
        'irreversible',
        /rt_kill\(p integer\) calls pg_catalog\.pg_terminate_backend\(…\), which signals another server process/,
      ],
      ['SELECT rt_file()', 'irreversible', /lo_export.*writes a large object to a file on the server/],
      ['SELECT rt_lock(1)', 'irreversible', /takes an advisory lock/],
      ['SELECT rt_dblink()', 'irreversible', /dblink_exec\(text, text\), which works over another connection/],
      ['SELECT rt_dynamic($q$SELECT 1$q$)', 'unknown', /runs SQL built at run time \(dynamic EXECUTE\)/],
      ['SELECT rt_const()', 'irreversible', /rt_const\(\) calls pg_catalog\.pg_advisory_lock\(…\)/],
      [
        'SELECT rt_slow()',
        'irreversible',
        /overrides the preview's time limits for its body \(SET lock_timeout=10min\)/,
      ],
      ['SELECT rt_outer()', 'irreversible', /rt_outer\(\) calls public\.rt_shell\(\), which runs COPY … PROGRAM/],
      [
        'SELECT rt_broken()',
        'unknown',
        /rt_broken\(\) has a body that does not parse: syntax error at or near "RETRUN"/,
      ],
      ['SELECT rt_writer()', 'write', /runs INSERT INTO log/],
      [
        'SELECT rt_default_arg(1)',
        'irreversible',
        /rt_default_arg\(a integer, k bigint\) reaches public\.rt_lock\(k bigint\) \(default argument\), which calls pg_catalog\.pg_advisory_lock/,
      ],
      ['SELECT pg_terminate_backend(1)', 'irreversible', /pg_terminate_backend\(…\) signals another server process/],
      ['SELECT pg_advisory_lock(1)', 'irreversible', /takes an advisory lock/],
      ['SELECT * FROM pg_hba_file_rules', 'privileged', /reads the server's pg_hba\.conf/],
      [
        'SELECT * FROM v_hba',
        'privileged',
        /view public\.v_hba → view pg_catalog\.pg_hba_file_rules\) reads the server's pg_hba\.conf/,
      ],
      ['SELECT * FROM pg_file_settings', 'privileged', /configuration files/],
    ];
    for (const [sql, kind, reason] of cases) {
      const r = await reach(sql);
      expect(r.effects[0]?.kind, sql).toBe(kind);
      expect(reasons(r), sql).toMatch(reason);
    }
    const dblink = await reach('SELECT rt_dblink()');
    expect(dblink.entries.find((e) => e.function === 'public.dblink_exec(text, text)')).toMatchObject({
      via: 'called by public.rt_dblink()',
      verdict: 'side-effect',
    });
  });

  it('reaches code through operators, casts, domains, views, matview refreshes and RLS', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'SELECT 1 === 2',
        'irreversible',
        /op_lock\(a integer, b integer\) \(operator public\.=== \(integer, integer\)\) calls pg_catalog\.pg_try_advisory_lock/,
      ],
      ['SELECT 5::locked_int', 'irreversible', /dom_check\(x integer\) \(check of domain public\.locked_int\)/],
      [
        'SELECT (ROW(1, 2)::pair)::int',
        'irreversible',
        /pair_to_int\(p pair\) \(cast to int4\) calls public\.rt_shell\(\)/,
      ],
      [
        'SELECT * FROM v_of_v',
        'irreversible',
        /rt_lock\(k bigint\) \(view public\.v_of_v → view public\.v_lock\) calls pg_catalog\.pg_advisory_lock/,
      ],
      ['REFRESH MATERIALIZED VIEW mv', 'irreversible', /refresh of materialized view public\.mv/],
      ['CREATE TABLE copy_of AS SELECT * FROM v_lock', 'irreversible', /view public\.v_lock/],
      ['SELECT * FROM secret', 'irreversible', /\(policy p_read on public\.secret\)/],
      ['SELECT 1 WHERE 1 === ANY (SELECT 2)', 'irreversible', /operator public\.===/],
      ['SELECT id FROM t ORDER BY id USING ===', 'irreversible', /operator public\.===/],
      [
        "SELECT '[1,5)'::evil_range",
        'irreversible',
        /evil_diff\(a integer, b integer\) \(input\/output of type public\.evil_range\)/,
      ],
      [
        'DO $$ BEGIN PERFORM rt_shell(); END $$',
        'irreversible',
        /^DO block calls public\.rt_shell\(\), which runs COPY … PROGRAM/,
      ],
      ['DO LANGUAGE plperl $$ 1 $$', 'unknown', /runs a plperl block we cannot see into/],
    ];
    for (const [sql, kind, reason] of cases) {
      const r = await reach(sql);
      expect(kinds(r)[0], sql).toBe(kind);
      expect(reasons(r), sql).toMatch(reason);
    }
  });

  it('reaches defaults, generated columns, index expressions and sequences of the rows written', async () => {
    const insert = await reach('INSERT INTO d (id) VALUES (1)');
    expect(reasons(insert)).toMatch(/rt_lock\(k bigint\) \(default of public\.d\.k\)/);
    expect(insert.entries.map((e) => [e.function, e.via])).toContainEqual([
      'public.add_one(x integer)',
      'generated column public.d.g',
    ]);
    // The column is given: its default does not run.
    expect((await reach('INSERT INTO d (id, k) VALUES (1, 2)')).effects).toEqual([]);
    expect(reasons(await reach('UPDATE d SET k = DEFAULT'))).toMatch(/default of public\.d\.k/);
    expect(reasons(await reach('UPDATE gen SET id = 2'))).toMatch(/generated column public\.gen\.g/);
    expect(reasons(await reach('INSERT INTO dom_col (id) VALUES (1)'))).toMatch(
      /dom_check\(x integer\) \(column public\.dom_col\.v → check of domain public\.locked_int\)/,
    );
    // Reading a domain-typed column runs no check.
    expect((await reach('SELECT v FROM dom_col')).effects).toEqual([]);
    expect(reasons(await reach('INSERT INTO idx VALUES (1)'))).toMatch(
      /idx_fn\(x integer\) \(index on public\.idx\) calls pg_catalog\.pg_notify/,
    );
    expect(reasons(await reach('INSERT INTO opc VALUES (1)'))).toMatch(
      /evil_cmp\(a integer, b integer\) \(operator class public\.evil_ops of an index on public\.opc\) calls pg_catalog\.pg_advisory_lock/,
    );
    expect((await reach('SELECT * FROM opc')).effects).toEqual([]);
    for (const sql of ['ANALYZE idx', 'REINDEX TABLE idx', 'VACUUM ANALYZE'])
      expect(reasons(await reach(sql)), sql).toMatch(/index on public\.idx/);
    expect((await reach('ANALYZE t')).effects).toEqual([]);
    const serial = await reach("INSERT INTO t (b) VALUES ('x')");
    expect(serial.sequences).toEqual(['public.t_id_seq']);
    expect(serial.effects).toEqual([
      {
        kind: 'sequence',
        reason: 'pg_catalog.nextval(…) (default of public.t.id) advances the sequence public.t_id_seq',
      },
    ]);
    const identity = await reach("INSERT INTO log (msg) VALUES ('x')");
    expect(identity.sequences).toEqual(['public.log_id_seq']);
    expect(reasons(identity)).toMatch(/identity column public\.log\.id/);
    const viaFunction = await reach('SELECT rt_next()');
    expect(viaFunction.sequences).toEqual(['t_id_seq']);
    expect(viaFunction.effects.map((e) => e.kind)).toEqual(['sequence']);
  });

  it('reaches triggers by event, timing and level, INSTEAD OF triggers, rules, and skips disabled ones', async () => {
    const del = await reach('DELETE FROM trg WHERE id = 1');
    expect(del.effects).toEqual([
      {
        kind: 'irreversible',
        reason:
          'public.trg_shell() (trigger trg_before_delete on public.trg (BEFORE DELETE, row)) runs COPY … PROGRAM (a shell command on the server)',
      },
    ]);
    const upd = await reach('UPDATE trg SET id = 2');
    expect(reasons(upd)).toMatch(
      /trg_kill\(\) \(trigger trg_after_update on public\.trg \(AFTER UPDATE, statement\)\)/,
    );
    expect(reasons(upd)).not.toMatch(/trg_shell/);
    const ins = await reach('INSERT INTO trg VALUES (1)');
    expect(ins.sequences).toEqual(['t_id_seq']);
    expect(reasons(ins)).not.toMatch(/trg_shell/); // trg_disabled is disabled
    expect(reasons(await reach('INSERT INTO v_trg VALUES (1)'))).toMatch(
      /trigger v_trg_ins on public\.v_trg \(INSTEAD OF INSERT, row\)/,
    );
    const rule = await reach('DELETE FROM ruled');
    expect(rule.effects).toEqual([
      {
        kind: 'irreversible',
        reason: 'rule ruled_notify on public.ruled (ON DELETE) sends a notification to other sessions (NOTIFY)',
      },
    ]);
    expect((await reach('SELECT * FROM trg')).effects).toEqual([]);
  });

  it('follows FK actions two levels deep and TRUNCATE CASCADE', async () => {
    const r = await reach('DELETE FROM orders WHERE id = 1');
    expect(reasons(r)).toBe(
      'public.note_shell() (ON DELETE CASCADE from public.orders → ON DELETE SET NULL from public.order_items → trigger note_update on public.item_notes (AFTER UPDATE, row)) runs COPY … PROGRAM (a shell command on the server)',
    );
    expect((await reach('UPDATE orders SET id = 2')).effects).toEqual([]);
    expect(reasons(await reach('TRUNCATE orders CASCADE'))).toMatch(
      /TRUNCATE CASCADE from public\.orders → trigger trunc_t on public\.trunc_child/,
    );
    expect((await reach('TRUNCATE trg')).effects).toEqual([]);
  });

  it('reaches event triggers for matching DDL only', async () => {
    const r = await reach('CREATE TABLE newt (id int)');
    expect(r.effects).toEqual([
      { kind: 'ddl', reason: 'public.evt_fn() (event trigger evt_create (ddl_command_end)) runs CREATE TABLE' },
    ]);
    expect((await reach('CREATE INDEX ON t (a)')).effects).toEqual([]);
  });

  it('sees a CREATE OR REPLACE FUNCTION at the very next call, and other installed languages as unknown', async () => {
    const first = await reach('SELECT add_one(1)');
    expect(first.effects).toEqual([]);
    // Nothing changed: the cached verdict is given again (the same object).
    expect(await reach('SELECT add_one(1)')).toBe(first);
    await execSql(
      database.scratch.url,
      "CREATE OR REPLACE FUNCTION add_one(x int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 1) TO PROGRAM 'true'; RETURN x + 1; END $$",
    );
    expect(kinds(await reach('SELECT add_one(1)'))).toEqual(['irreversible']);
    await execSql(
      database.scratch.url,
      "CREATE OR REPLACE FUNCTION add_one(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 1'",
    );
    expect((await reach('SELECT add_one(1)')).effects).toEqual([]);
    await execSql(database.scratch.url, "CREATE FUNCTION c_fn(int) RETURNS int LANGUAGE internal AS 'int4abs'");
    expect(reasons(await reach('SELECT c_fn(1)'))).toMatch(
      /c_fn\(integer\) is written in internal, code we cannot see into/,
    );
  });

  it('bounds depth and size, and follows cycles to the effect inside them', async () => {
    // deep0 → deep1 → … → deep14: more than 12 levels of calls.
    const deep = Array.from(
      { length: 15 },
      (_, i) =>
        `CREATE FUNCTION deep${i}(x int) RETURNS int LANGUAGE sql AS 'SELECT ${i < 14 ? `deep${i + 1}(x)` : 'x'}';`,
    );
    // wide calls 410 different functions in one body.
    const wide = Array.from(
      { length: 410 },
      (_, i) => `CREATE FUNCTION w${i}(x int) RETURNS int LANGUAGE sql AS 'SELECT x';`,
    );
    const calls = Array.from({ length: 410 }, (_, i) => `w${i}(1)`).join(' + ');
    await execSql(
      database.scratch.url,
      [
        ...deep.reverse(),
        ...wide,
        `CREATE FUNCTION wide() RETURNS int LANGUAGE sql AS 'SELECT ${calls}';`,
        'CREATE FUNCTION cyc_a(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN cyc_b(n); END $$;',
        'CREATE FUNCTION cyc_b(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN IF n > 0 THEN RETURN cyc_a(n - 1); END IF; PERFORM pg_advisory_lock(n); RETURN 0; END $$;',
      ].join('\n'),
    );
    expect(reasons(await reach('SELECT deep0(1)'))).toMatch(
      /^public\.deep0\(x integer\) calls public\.deep1\(x integer\), which calls .* calls functions nested deeper than 12 levels$/,
    );
    expect((await reach('SELECT deep5(1)')).effects).toEqual([]);
    expect(reasons(await reach('SELECT wide()'))).toMatch(/reaches more than 400 functions/);
    expect((await reach('SELECT w1(1), w2(2)')).effects).toEqual([]);
    const cycle = await reach('SELECT cyc_a(1)');
    expect(reasons(cycle)).toMatch(
      /^public\.cyc_a\(n integer\) calls public\.cyc_b\(n integer\), which calls pg_catalog\.pg_advisory_lock/,
    );
    expect(kinds(await reach('SELECT cyc_b(1)'))).toEqual(['irreversible']);
  });

  it('trusts the allow-listed contrib extensions, the side-effect list first, and no other C code', async () => {
    // evt_create would fire for CREATE TABLE below (and again for the table it creates): a disabled event
    // trigger is not reached.
    await execSql(database.scratch.url, 'ALTER EVENT TRIGGER evt_create DISABLE');
    expect((await reach('CREATE TABLE newt (id int)')).effects).toEqual([]);
    await execSql(
      database.scratch.url,
      `CREATE EXTENSION citext; CREATE EXTENSION moddatetime; CREATE EXTENSION pgcrypto;
      CREATE EXTENSION pg_stat_statements; CREATE EXTENSION tablefunc; CREATE EXTENSION pgrowlocks;
      CREATE TABLE people (id int, email citext, changed timestamp);
      CREATE TRIGGER people_changed BEFORE UPDATE ON people FOR EACH ROW EXECUTE FUNCTION moddatetime(changed);`,
    );
    for (const sql of [
      "SELECT * FROM people WHERE email = 'A@B.C'",
      "UPDATE people SET email = 'x' WHERE id = 1",
      "SELECT crypt('pw', gen_salt('bf')), digest('x', 'sha256')",
      'SELECT query, calls FROM pg_stat_statements',
      'SELECT * FROM normal_rand(3, 0, 1)',
    ])
      expect((await reach(sql)).effects, sql).toEqual([]);
    expect((await reach("UPDATE people SET email = 'x'")).entries).toContainEqual({
      function: 'public.moddatetime()',
      via: 'trigger people_changed on public.people (BEFORE UPDATE, row)',
      verdict: 'safe',
    });
    expect(reasons(await reach('SELECT pg_stat_statements_reset()'))).toMatch(/resets server statistics/);
    expect(kinds(await reach("SELECT * FROM crosstab('SELECT 1') AS t(a int)"))).toEqual(['unknown']);
    expect(reasons(await reach("SELECT * FROM pgrowlocks('people')"))).toMatch(
      /pgrowlocks\(relname text[^)]*\) is written in c \(extension pgrowlocks\), code we cannot see into/,
    );
  });

  it('sees a change committed by a transaction that was open during the previous check', async () => {
    const other = new pg.Client({ connectionString: database.scratch.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        'CREATE OR REPLACE FUNCTION shout(x text) RETURNS text LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(1); RETURN x; END $$',
      );
      expect((await reach("SELECT shout('a')")).effects).toEqual([]); // not committed: not what would run
      expect((await reach("SELECT shout('b')")).effects).toEqual([]);
      await other.query('COMMIT');
      expect(kinds(await reach("SELECT shout('c')"))).toEqual(['irreversible']);
    } finally {
      await other.end();
    }
  });

  it('runs none of the code it judges', async () => {
    const marker = `/tmp/pgagent_reach_${database.scratch.name}`;
    await execSql(
      database.scratch.url,
      `CREATE FUNCTION rt_touch() RETURNS int LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 1) TO PROGRAM 'touch ${marker}'; PERFORM pg_advisory_lock(42); RETURN 1; END $$`,
    );
    const before = await queryValue(database.scratch.url, 'SELECT last_value FROM t_id_seq');
    for (const sql of [
      'SELECT rt_touch()',
      'SELECT * FROM v_lock',
      'DELETE FROM trg',
      "INSERT INTO t (b) VALUES ('x')",
      'REFRESH MATERIALIZED VIEW mv',
    ]) {
      expect((await reach(sql)).effects.length, sql).toBeGreaterThan(0);
    }
    // The server's view: no file written, no advisory lock held by anyone, the sequence where it was.
    expect(await queryValue(database.scratch.url, `SELECT pg_stat_file('${marker}', true) IS NULL`)).toBe(true);
    expect(
      await queryValue(database.scratch.url, "SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory'"),
    ).toBe(0);
    expect(await queryValue(database.scratch.url, 'SELECT last_value FROM t_id_seq')).toBe(before);
  });

  it('judges through a role that may read no table: a trigger on a table it cannot read is still seen', async () => {
    const role = `reach_${database.scratch.name}`;
    await execSql(database.scratch.url, `CREATE ROLE ${role} LOGIN`);
    const url = new URL(database.scratch.url);
    url.username = role;
    const weak = await openPostgres(parseConnectionUrl(url.toString()), { logger: silentLogger });
    try {
      expect(await queryValue(url.toString(), "SELECT has_table_privilege('trg', 'SELECT')")).toBe(false);
      const [r] = await reachOf(weak, parseSql('DELETE FROM trg').statements);
      expect(r?.effects[0]?.reason).toMatch(
        /trg_shell\(\) \(trigger trg_before_delete on public\.trg \(BEFORE DELETE, row\)\) runs COPY … PROGRAM/,
      );
    } finally {
      await weak.close();
      await execSql(database.scratch.url, `DROP ROLE ${role}`);
    }
  });

  it('answers concurrent calls on a fresh connection with the same verdicts', async () => {
    const fresh = await openPostgres(parseConnectionUrl(database.scratch.url), { logger: silentLogger });
    try {
      const statements = parseSql('SELECT rt_shell(); SELECT add_one(1)').statements;
      const [a, b] = await Promise.all([reachOf(fresh, statements), reachOf(fresh, statements)]);
      expect(a?.map((r) => r.effects.length)).toEqual([1, 0]);
      expect(b).toEqual(a);
    } finally {
      await fresh.close();
    }
  });

  it('says unknown, never safe, when the catalog cannot be read', async () => {
    // A connection that can no longer query stands for any catalog we may not read.
    const broken = await openPostgres(parseConnectionUrl(database.scratch.url), { logger: silentLogger });
    await broken.close();
    const [r] = await reachOf(broken, parseSql('SELECT add_one(1)').statements);
    expect(r?.effects[0]?.kind).toBe('unknown');
    expect(r?.effects[0]?.reason).toMatch(/the database's code could not be read/);
  });
});
