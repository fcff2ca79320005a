// PL/pgSQL and SQL function bodies → effects (SPEC §5 1a), from the text alone: the body judge walks every
// embedded SQL with libpg-query, with an empty catalog (only built-ins, judged by the side-effect list).
import { beforeAll, describe, expect, it } from 'vitest';
import { emptyCatalog } from '../../../../src/core/sql/reach/codeCatalog';
import { bodyCtx, judgePlpgsqlText, judgeSqlText } from '../../../../src/core/sql/reach/judgeFunction';
import { embeddedSql } from '../../../../src/core/sql/reach/plpgsqlBody';
import { ReachEngine } from '../../../../src/core/sql/reach/reachEngine';
import type { Judgement } from '../../../../src/core/sql/reach/reachFound';
import { loadParser } from '../../../../src/core/sql/parse';

const plpgsql = (body: string, returns = 'void', declare = ''): Judgement => {
  const ctx = bodyCtx('public.f()');
  judgePlpgsqlText(
    new ReachEngine(emptyCatalog()),
    `CREATE FUNCTION public.f() RETURNS ${returns} LANGUAGE plpgsql AS $body$\n${declare}BEGIN\n${body}\nEND\n$body$`,
    ctx,
  );
  return ctx.found.judgement();
};
const sql = (body: string): Judgement => {
  const ctx = bodyCtx('public.f()');
  judgeSqlText(new ReachEngine(emptyCatalog()), body, ctx);
  return ctx.found.judgement();
};
const effects = (j: Judgement): string[] => j.problems.map((p) => `${p.kind}: ${p.what}`);

describe('Function bodies', () => {
  beforeAll(loadParser);

  it('finds nothing in bodies that only compute, read and return', () => {
    expect(
      effects(plpgsql("x := lower('A') || date_trunc('day', now())::text; RETURN;", 'void', 'DECLARE x text;\n')),
    ).toEqual([]);
    expect(effects(plpgsql('RETURN QUERY SELECT count(*)::int FROM pg_class; RETURN;', 'SETOF int'))).toEqual([]);
    expect(effects(sql('SELECT $1 + 1; SELECT upper(name) FROM pg_namespace'))).toEqual([]);
    expect(effects(plpgsql("SET LOCAL search_path = public; PERFORM set_config('a.b', 'c', true);"))).toEqual([]);
  });

  it('treats EXECUTE of a non-constant string as unknown code and parses EXECUTE of a constant', () => {
    expect(effects(plpgsql("EXECUTE format('DROP TABLE %I', 't');"))).toEqual([
      'unknown: runs SQL built at run time (dynamic EXECUTE)',
    ]);
    expect(effects(plpgsql("EXECUTE 'SELECT 1' || 'x';"))).toEqual([
      'unknown: runs SQL built at run time (dynamic EXECUTE)',
    ]);
    expect(effects(plpgsql("EXECUTE 'SELECT pg_terminate_backend(1)';"))).toEqual([
      'irreversible: calls pg_catalog.pg_terminate_backend(…), which signals another server process',
    ]);
    expect(effects(plpgsql("EXECUTE 'SELECT 1';"))).toEqual([]);
    // The USING values run too.
    expect(effects(plpgsql("EXECUTE 'SELECT $1' USING pg_advisory_lock(1);"))[0]).toMatch(
      /^irreversible: calls pg_catalog\.pg_advisory_lock/,
    );
    expect(effects(plpgsql('FOR r IN EXECUTE q LOOP END LOOP;', 'void', 'DECLARE r record; q text;\n'))).toEqual([
      'unknown: runs SQL built at run time (dynamic EXECUTE)',
    ]);
    expect(effects(plpgsql('OPEN c FOR EXECUTE q;', 'void', 'DECLARE c refcursor; q text;\n'))).toEqual([
      'unknown: runs SQL built at run time (dynamic EXECUTE)',
    ]);
  });

  it('flags COPY … PROGRAM, server files, session settings, notifications and transaction control', () => {
    expect(effects(plpgsql("COPY (SELECT 1) TO PROGRAM 'touch /tmp/x';"))).toEqual([
      'irreversible: runs COPY … PROGRAM (a shell command on the server)',
    ]);
    expect(effects(plpgsql("COPY (SELECT 1) TO '/tmp/x';"))).toEqual([
      "irreversible: runs COPY with a file on the server (reads or writes the server's files)",
    ]);
    expect(effects(plpgsql('SET search_path = evil;'))).toEqual([
      'irreversible: changes the session setting search_path (SET without LOCAL)',
    ]);
    expect(effects(plpgsql("PERFORM set_config('statement_timeout', '0', false);"))[0]).toMatch(
      /^irreversible: calls pg_catalog\.set_config/,
    );
    expect(effects(plpgsql('NOTIFY chan; LISTEN chan;'))).toEqual([
      'irreversible: sends a notification to other sessions (NOTIFY)',
      'irreversible: listens for notifications in the session (LISTEN)',
    ]);
    const procedure = new ReachEngine(emptyCatalog());
    const ctx = bodyCtx('public.p()');
    judgePlpgsqlText(
      procedure,
      'CREATE PROCEDURE public.p() LANGUAGE plpgsql AS $$ BEGIN INSERT INTO t VALUES (1); COMMIT; END $$',
      ctx,
    );
    expect(effects(ctx.found.judgement())).toEqual([
      'irreversible: commits the transaction (COMMIT in a procedure)',
      'write: runs INSERT INTO t',
    ]);
  });

  it('flags writes, DDL, locks and sequences, worst first', () => {
    expect(
      effects(
        plpgsql(
          "UPDATE accounts SET balance = 0; PERFORM nextval('s'); LOCK TABLE other IN ACCESS EXCLUSIVE MODE; CREATE TABLE x (id int);",
        ),
      ),
    ).toEqual([
      'ddl: locks other (LOCK TABLE)',
      'ddl: runs CREATE TABLE',
      'write: runs UPDATE accounts',
      'sequence: calls pg_catalog.nextval(…), which advances the sequence s',
    ]);
    expect(plpgsql("PERFORM nextval('public.s');").sequences).toEqual(['public.s']);
    expect(effects(sql('DELETE FROM t WHERE id = $1; TRUNCATE t'))).toEqual([
      'ddl: runs TRUNCATE TABLE',
      'write: runs DELETE FROM t',
    ]);
  });

  it('walks nested blocks, IF/ELSIF/WHILE/CASE conditions, exception handlers, RETURN QUERY, cursors and defaults', () => {
    const lock = /^irreversible: calls pg_catalog\.pg_advisory_lock/;
    expect(effects(plpgsql('BEGIN BEGIN PERFORM pg_advisory_lock(1); END; END;'))[0]).toMatch(lock);
    expect(effects(plpgsql('IF pg_advisory_lock(1) IS NULL THEN RETURN; END IF;'))[0]).toMatch(lock);
    expect(effects(plpgsql('IF false THEN NULL; ELSIF pg_try_advisory_lock(1) THEN NULL; END IF;'))[0]).toMatch(
      /^irreversible: calls pg_catalog\.pg_try_advisory_lock/,
    );
    expect(effects(plpgsql('WHILE pg_advisory_lock(1) IS NULL LOOP END LOOP;'))[0]).toMatch(lock);
    expect(effects(plpgsql('CASE WHEN pg_advisory_lock(1) IS NULL THEN NULL; ELSE NULL; END CASE;'))[0]).toMatch(lock);
    expect(
      effects(plpgsql('PERFORM 1/0; EXCEPTION WHEN division_by_zero THEN PERFORM pg_advisory_lock(1);'))[0],
    ).toMatch(lock);
    expect(effects(plpgsql('RETURN QUERY SELECT pg_advisory_lock(1)::text::int; RETURN;', 'SETOF int'))[0]).toMatch(
      lock,
    );
    expect(
      effects(plpgsql('OPEN c; CLOSE c;', 'void', 'DECLARE c CURSOR FOR SELECT pg_advisory_lock(1);\n'))[0],
    ).toMatch(lock);
    expect(effects(plpgsql('RETURN;', 'void', 'DECLARE x bool := pg_advisory_lock(1) IS NULL;\n'))[0]).toMatch(lock);
    expect(effects(plpgsql('x := pg_advisory_lock(1) IS NULL;', 'void', 'DECLARE x bool;\n'))[0]).toMatch(lock);
    expect(effects(plpgsql("RAISE NOTICE '%', pg_advisory_lock(1);"))[0]).toMatch(lock);
  });

  it('gives unknown code, not a crash, for bodies that do not parse', () => {
    expect(effects(plpgsql('RETRUN 1;'))).toEqual([
      'unknown: has a body that does not parse: syntax error at or near "RETRUN"',
    ]);
    expect(effects(sql('SELEC 1'))[0]).toMatch(
      /^unknown: has a body that does not parse: syntax error at or near "SELEC"/,
    );
    const ctx = bodyCtx('public.f()');
    judgePlpgsqlText(new ReachEngine(emptyCatalog()), null, ctx);
    expect(effects(ctx.found.judgement())).toEqual(['unknown: has a body that could not be read']);
    expect(effects(sql('  -- only a comment\n'))).toEqual([]);
  });

  it('turns assignments and expressions into statements libpg-query parses', () => {
    expect(embeddedSql({ query: 'x := a + 1', parseMode: 3 })).toBe('SELECT  a + 1');
    expect(embeddedSql({ query: 'NEW.a := f(1)', parseMode: 4 })).toBe('SELECT  f(1)');
    expect(embeddedSql({ query: 'a > 0', parseMode: 2 })).toBe('SELECT a > 0');
    expect(embeddedSql({ query: 'DELETE FROM t', parseMode: 0 })).toBe('DELETE FROM t');
  });
});
