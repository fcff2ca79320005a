/**
 * DDL and maintenance impact on the real PostgreSQL (SPEC §5.4a): locks, rewrites, dependents, would-fail
 * predicted without running, lint, non-transactional statements held and run alone — and the preview never
 * blocking another session, asserted by observation (pg_blocking_pids / pg_locks of a second session).
 * "Big" and "small" come from the policy's thresholds so that a 3,000-row table is big enough.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { AgentError } from '../../../../src/core/platform/errors';
import { silentLogger } from '../../../../src/core/platform/logger';
import { classifySql } from '../../../../src/core/sql/classify';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import type { ImpactOptions } from '../../../../src/core/sql/impact';
import { analyzeImpact } from '../../../../src/core/sql/impact';
import { loadParser } from '../../../../src/core/sql/parse';
import { runSql } from '../../../../src/core/sql/runSql';
import type { SafetySettings } from '../../../../src/core/sql/safetySettings';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { runPgAgent } from '../../../support/cliHarness';
import { execSql, postgresAvailable } from '../../../support/services';
import { useSchemaDatabase } from '../../../support/shopDatabase';
import { IMPACT_JSON_FIELDS } from '../../../support/impactReports';

const settings: SafetySettings = {
  ...DEFAULT_SAFETY,
  policy: {
    ...DEFAULT_SAFETY.policy,
    thresholds: { ...DEFAULT_SAFETY.policy.thresholds, smallTableRows: 100, bigTableRows: 1000 },
  },
};

const SCHEMA = `
CREATE TABLE small (id int PRIMARY KEY, a int);
INSERT INTO small SELECT g, g FROM generate_series(1, 10) g;
CREATE TABLE big (id int PRIMARY KEY, a int, b int, small_id int);
INSERT INTO big SELECT g, CASE WHEN g % 500 = 0 THEN NULL ELSE g - 5 END, g % 700, g % 20 FROM generate_series(1, 3000) g;
CREATE VIEW big_view AS SELECT id, a FROM big;
CREATE TABLE child (id int PRIMARY KEY, big_id int REFERENCES big (id));
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL);
ANALYZE small; ANALYZE big; ANALYZE child; ANALYZE customers;
`;

describe.runIf(postgresAvailable)('DDL impact on PostgreSQL (SPEC §5.4a)', () => {
  const database = useSchemaDatabase(SCHEMA);
  beforeAll(() => loadParser());

  const impact = (sql: string, extra: Partial<ImpactOptions> = {}) =>
    analyzeImpact(database.db, classifySql(sql), { ...settings, ...extra });
  const client = async () => {
    const c = new pg.Client({ connectionString: database.scratch.url });
    await c.connect();
    return c;
  };
  const filenode = async (table: string) =>
    Number((await database.db.query<{ n: string }>(`SELECT pg_relation_filenode('${table}')::text AS n`)).rows[0]?.n);

  /**
   * Runs `work` while a second session reads and writes `table` in a loop and a third polls
   * pg_blocking_pids() of the second: returns every blocker seen and how many probes completed.
   */
  async function observe<T>(
    table: string,
    work: () => Promise<T>,
  ): Promise<{ result: T; blockers: number[]; probes: number }> {
    const prober = await client();
    const watcher = await client();
    const pid = Number((await prober.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    await prober.query("SET statement_timeout = '10s'");
    let done = false;
    let probes = 0;
    const blockers = new Set<number>();
    let started: () => void = () => undefined;
    const firstProbe = new Promise<void>((resolve) => (started = resolve));
    const probing = (async () => {
      while (!done) {
        await prober.query(`SELECT * FROM ${table} WHERE id = 1`);
        await prober.query(`UPDATE ${table} SET id = id WHERE id = 1`);
        probes++;
        started();
      }
    })();
    const watching = (async () => {
      while (!done) {
        const r = await watcher.query<{ b: number[] }>('SELECT pg_blocking_pids($1) AS b', [pid]);
        for (const b of r.rows[0]?.b ?? []) blockers.add(b);
      }
    })();
    await firstProbe;
    const before = probes;
    try {
      const result = await work();
      done = true;
      await Promise.all([probing, watching]);
      // The probe running while `work` ran has finished too: `probes - before` counts it.
      return { result, blockers: [...blockers], probes: probes - before };
    } finally {
      done = true;
      await Promise.all([probing, watching]);
      await prober.end();
      await watcher.end();
    }
  }

  describe('the preview that cannot block', () => {
    it('analyses a volatile default on a big table without running it: no other session is ever blocked', async () => {
      const node = await filenode('big');
      const { result, blockers, probes } = await observe('big', () =>
        impact('ALTER TABLE big ADD COLUMN x float DEFAULT random()'),
      );
      expect(blockers).toEqual([]);
      expect(probes).toBeGreaterThan(0);
      expect(result.previewed).toBe(false);
      expect(result.locks).toEqual([
        expect.objectContaining({
          table: 'public.big',
          mode: 'ACCESS EXCLUSIVE',
          blocks: 'reads and writes',
          work: 'rewrite',
          rows: 3000,
        }),
      ]);
      expect(result.rewrites).toEqual(['public.big']);
      expect(result.risk).toBe('CRITICAL');
      expect(result.lint).toContainEqual(
        expect.objectContaining({ rule: 'adding-field-with-default', saferSql: 'ALTER TABLE big ADD COLUMN x float8' }),
      );
      expect(await filenode('big')).toBe(node);
    });

    it('previews the same change on a small table and confirms the rewrite by its relfilenode', async () => {
      const result = await impact('ALTER TABLE small ADD COLUMN x float DEFAULT random()');
      expect(result.previewed).toBe(true);
      expect(result.rewrites).toEqual(['public.small']);
      expect(result.risk).toBe('LOW');
      expect(
        (await database.db.query("SELECT 1 FROM pg_attribute WHERE attrelid = 'small'::regclass AND attname = 'x'"))
          .rows,
      ).toEqual([]);
    });

    it('a constant default is catalog-only: previewed on the big table, no rewrite, LOW', async () => {
      const result = await impact('ALTER TABLE big ADD COLUMN y int DEFAULT 0');
      expect(result.previewed).toBe(true);
      expect(result.rewrites).toEqual([]);
      expect(result.locks[0]).toMatchObject({ mode: 'ACCESS EXCLUSIVE', work: 'instant' });
      expect(result.risk).toBe('LOW');
    });

    it('does not queue behind a session holding a conflicting lock: "waits behind 1 session", and readers are never blocked by the preview', async () => {
      const holder = await client();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT * FROM small');
        const holderPid = Number((await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
        const { result, blockers, probes } = await observe('small', () => impact('ALTER TABLE small ADD COLUMN z int'));
        // The holder's ACCESS SHARE blocks no reader; a queued ACCESS EXCLUSIVE of the preview would have.
        expect(blockers).toEqual([]);
        expect(probes).toBeGreaterThan(0);
        expect(result.previewed).toBe(false);
        // At least the holder (the probing session's own brief locks may be counted too).
        expect(result.locks[0]?.waitsBehind).toBeGreaterThanOrEqual(1);
        expect(result.warnings.join('\n')).toContain(`pid ${holderPid} holds ACCESS SHARE`);
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
    });

    it('a weak-lock preview lets reads and writes of the table finish while its transaction is still open', async () => {
      await execSql(database.scratch.url, 'ALTER TABLE big ADD CONSTRAINT big_b_nonneg CHECK (b >= 0) NOT VALID');
      const other = await client();
      let finished: string[] = [];
      try {
        await other.query("SET statement_timeout = '5s'");
        const otherPid = Number((await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
        const watcher = await client();
        let blockersSeen: number[] = [];
        const result = await impact('ALTER TABLE big VALIDATE CONSTRAINT big_b_nonneg', {
          whilePreviewOpen: async () => {
            const reading = other.query('SELECT count(*) FROM big').then(() => 'read');
            const writing = reading.then(() => other.query('UPDATE big SET b = b WHERE id = 2')).then(() => 'write');
            blockersSeen =
              (await watcher.query<{ b: number[] }>('SELECT pg_blocking_pids($1) AS b', [otherPid])).rows[0]?.b ?? [];
            finished = [await reading, await writing];
          },
        });
        await watcher.end();
        expect(result.previewed).toBe(true);
        expect(result.locks[0]).toMatchObject({ mode: 'SHARE UPDATE EXCLUSIVE', blocks: 'nothing' });
        expect(blockersSeen).toEqual([]);
        expect(finished).toEqual(['read', 'write']);
      } finally {
        await other.end();
        await execSql(database.scratch.url, 'ALTER TABLE big DROP CONSTRAINT big_b_nonneg');
      }
    });

    it('CREATE INDEX on a big table is analysed, not built: HIGH, with the CONCURRENTLY form offered', async () => {
      const { result, blockers } = await observe('big', () => impact('CREATE INDEX ON big (a)'));
      expect(blockers).toEqual([]);
      expect(result.previewed).toBe(false);
      expect(result.locks[0]).toMatchObject({ table: 'public.big', mode: 'SHARE', blocks: 'writes', work: 'scan' });
      expect(result.risk).toBe('HIGH');
      expect(result.lint).toContainEqual(
        expect.objectContaining({
          rule: 'require-concurrent-index-creation',
          saferSql: 'CREATE INDEX CONCURRENTLY ON big (a)',
        }),
      );
      expect(
        (await database.db.query("SELECT 1 FROM pg_indexes WHERE tablename = 'big' AND indexdef LIKE '%(a)%'")).rows,
      ).toEqual([]);
    });
  });

  describe('would fail, predicted with read-only queries', () => {
    it.each([
      ['ALTER TABLE big ALTER COLUMN a SET NOT NULL', '23502', false],
      ['ALTER TABLE big ADD CONSTRAINT a_pos CHECK (a > 0)', '23514', false],
      ['ALTER TABLE big ADD CONSTRAINT b_key UNIQUE (b)', '23505', false],
      ['CREATE UNIQUE INDEX ON big (b)', '23505', false],
      ['ALTER TABLE big ADD FOREIGN KEY (small_id) REFERENCES small (id)', '23503', false],
      ['ALTER TABLE big ADD FOREIGN KEY (small_id) REFERENCES small', '23503', false],
      // Catalog-only under its lock, so the bounded preview runs it (and sees it fail).
      ['ALTER TABLE big ADD COLUMN required int NOT NULL', '23502', true],
    ])('%s → %s (previewed: %s)', async (sql, code, previewed) => {
      const result = await impact(sql);
      expect(result.previewed).toBe(previewed);
      expect(result.wouldFail?.code).toBe(code);
    });

    it('predicts a NOT NULL column without default on a non-empty table when the table is busy (not previewed)', async () => {
      const holder = await client();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM big LIMIT 1');
        const result = await impact('ALTER TABLE big ADD COLUMN required int NOT NULL');
        expect(result.previewed).toBe(false);
        expect(result.wouldFail?.code).toBe('23502');
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
    });

    it.each([
      ['ALTER TABLE big ADD CONSTRAINT id_pos CHECK (id > 0)'],
      ['ALTER TABLE big ADD CONSTRAINT id_key UNIQUE (id)'],
      ['ALTER TABLE big ALTER COLUMN id SET NOT NULL'],
    ])('%s → would succeed', async (sql) => {
      const result = await impact(sql);
      expect(result.previewed).toBe(false);
      expect(result.wouldFail).toBeNull();
    });

    it('INSERT that fails still warns about the sequence value its preview used', async () => {
      const result = await impact('INSERT INTO customers DEFAULT VALUES');
      expect(result.wouldFail?.code).toBe('23502');
      expect(result.warnings.join('\n')).toMatch(
        /sequence values of (public\.)?customers_id_seq: they are not given back/,
      );
    });
  });

  describe('dependents from pg_depend', () => {
    it('a type change under a view would fail, and names the view', async () => {
      const result = await impact('ALTER TABLE big ALTER COLUMN a TYPE bigint');
      expect(result.dependents).toContainEqual(expect.objectContaining({ kind: 'view', name: 'big_view' }));
      expect(result.wouldFail?.code).toBe('0A000');
      expect(result.rewrites).toEqual(['public.big']);
    });

    it('DROP TABLE without CASCADE would fail; with CASCADE lists exactly what goes', async () => {
      const plain = await impact('DROP TABLE big');
      expect(plain.wouldFail?.code).toBe('2BP01');
      expect(plain.dependents.map((d) => `${d.kind} ${d.name}`).sort()).toEqual([
        'foreign key child_big_id_fkey on child',
        'view big_view',
      ]);
      const cascade = await impact('DROP TABLE big CASCADE');
      expect(cascade.wouldFail).toBeNull();
      expect(cascade.dependents).toContainEqual({ kind: 'view', name: 'big_view', effect: 'dropped by CASCADE' });
      expect(cascade.risk).toBe('CRITICAL');
    });

    it('dropping a column a view uses would fail', async () => {
      const result = await impact('ALTER TABLE big DROP COLUMN a');
      expect(result.wouldFail?.code).toBe('2BP01');
      expect(result.lint.map((l) => l.rule)).toContain('ban-drop-column');
    });
  });

  describe('lint', () => {
    it.each([
      [
        'ALTER TABLE big ADD CONSTRAINT a_pos CHECK (a > 0)',
        'constraint-missing-not-valid',
        'ALTER TABLE big ADD CONSTRAINT a_pos CHECK (a > 0) NOT VALID',
      ],
      [
        'ALTER TABLE big ADD FOREIGN KEY (small_id) REFERENCES small (id)',
        'constraint-missing-not-valid',
        'ALTER TABLE big ADD CONSTRAINT big_small_id_fkey FOREIGN KEY (small_id) REFERENCES small (id) NOT VALID',
      ],
      [
        'ALTER TABLE big ALTER COLUMN id SET NOT NULL',
        'adding-not-nullable-field',
        'ALTER TABLE big ADD CONSTRAINT big_id_not_null CHECK (id IS NOT NULL) NOT VALID',
      ],
      ['REINDEX TABLE big', 'require-concurrent-reindex', 'REINDEX TABLE CONCURRENTLY big'],
      ['DROP INDEX big_pkey', 'require-concurrent-index-deletion', 'DROP INDEX CONCURRENTLY big_pkey'],
      ['TRUNCATE small CASCADE', 'ban-truncate-cascade', 'TRUNCATE small'],
      [
        'ALTER TABLE big ADD CONSTRAINT b_key UNIQUE (b)',
        'disallowed-unique-constraint',
        'CREATE UNIQUE INDEX CONCURRENTLY b_key ON big (b)',
      ],
    ])('%s → %s with a safer statement', async (sql, rule, saferSql) => {
      const result = await impact(sql);
      expect(result.lint).toContainEqual(expect.objectContaining({ rule, saferSql }));
      // The safer statement is itself something the safety path accepts (held, never refused).
      expect(classifySql(saferSql).decision).toBe('approve');
    });

    it.each([
      ['VACUUM FULL big', 'ban-vacuum-full'],
      ['CLUSTER big USING big_pkey', 'ban-cluster'],
      ['ALTER TABLE big RENAME COLUMN b TO c', 'renaming-column'],
      ['ALTER TABLE big RENAME TO huge', 'renaming-table'],
      ['ALTER TABLE big ALTER COLUMN b TYPE bigint', 'changing-column-type'],
      ['DROP TABLE child', 'ban-drop-table'],
    ])('%s → %s', async (sql, rule) => {
      expect((await impact(sql)).lint.map((l) => l.rule)).toContain(rule);
    });

    it('a foreign key added to a table created just before asks for no NOT VALID (it has no rows)', async () => {
      const sql =
        'CREATE TABLE fresh (id int PRIMARY KEY, big_id int);\nALTER TABLE public.fresh ADD CONSTRAINT fresh_big_fk FOREIGN KEY (big_id) REFERENCES big (id)';
      expect((await impact(sql)).lint.map((l) => l.rule)).not.toContain('constraint-missing-not-valid');
      const onBig = await impact(
        'ALTER TABLE big ADD CONSTRAINT big_small_fk FOREIGN KEY (small_id) REFERENCES small (id)',
      );
      expect(onBig.lint.map((l) => l.rule)).toContain('constraint-missing-not-valid');
    });

    it('a NOT VALID constraint and a CONCURRENTLY index raise nothing about locks', async () => {
      const result = await impact('ALTER TABLE big ADD CONSTRAINT a_pos CHECK (a > 0) NOT VALID');
      expect(result.lint.map((l) => l.rule)).not.toContain('constraint-missing-not-valid');
      expect(result.previewed).toBe(true);
      expect(result.risk).toBe('LOW');
    });
  });

  describe('statements that run outside a transaction', () => {
    it('CREATE INDEX CONCURRENTLY is held (not refused) with transactional: false, not previewed', async () => {
      const store = new FileTicketStore(mkdtempSync(join(tmpdir(), 'pgagent-ddl-')), { logger: silentLogger });
      const outcome = await runSql(database.db, store, {
        sql: 'CREATE INDEX CONCURRENTLY big_b_idx ON big (b)',
        connection: 'c',
        requestedBy: 'tester',
        settings,
      });
      expect(outcome.status).toBe('held');
      if (outcome.status !== 'held') return;
      expect(outcome.impact.transactional).toBe(false);
      expect(outcome.impact.previewed).toBe(false);
      expect(outcome.impact.locks[0]).toMatchObject({ mode: 'SHARE UPDATE EXCLUSIVE', blocks: 'nothing' });
      expect(outcome.impact.warnings[0]).toMatch(/Cannot be rolled back/);
      expect((await store.get(outcome.ticket.id))?.impact.transactional).toBe(false);
    });

    it('runs alone after approval; a failure names the INVALID index left behind and the DROP to run', async () => {
      const store = new FileTicketStore(mkdtempSync(join(tmpdir(), 'pgagent-ddl-')), { logger: silentLogger });
      const exec = {
        ...settings,
        connection: 'c',
        by: 'tester',
        undo: workspaceUndoSink(mkdtempSync(join(tmpdir(), 'pgagent-ddl-undo-')), 'ddl'),
        logger: silentLogger,
      };
      const ok = await runSql(database.db, store, {
        sql: 'CREATE INDEX CONCURRENTLY big_a_idx ON big (a)',
        connection: 'c',
        requestedBy: 'tester',
        settings,
      });
      if (ok.status !== 'held') throw new Error(`expected held, got ${ok.status}`);
      await store.decide(ok.ticket.id, { approve: true, by: 'reviewer' });
      const done = await executeApproved(database.db, store, ok.ticket.id, exec);
      expect(done.ticket.status).toBe('EXECUTED');
      expect(
        (await database.db.query("SELECT indisvalid FROM pg_index WHERE indexrelid = 'big_a_idx'::regclass")).rows,
      ).toEqual([{ indisvalid: true }]);

      const bad = await runSql(database.db, store, {
        sql: 'CREATE UNIQUE INDEX CONCURRENTLY big_b_uidx ON big (b)',
        connection: 'c',
        requestedBy: 'tester',
        settings,
      });
      if (bad.status !== 'held') throw new Error(`expected held, got ${bad.status}`);
      expect(bad.impact.wouldFail?.code).toBe('23505');
      await store.decide(bad.ticket.id, { approve: true, by: 'reviewer' });
      const failure = await executeApproved(database.db, store, bad.ticket.id, exec).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AgentError);
      expect((failure as AgentError).advice).toContain('DROP INDEX CONCURRENTLY big_b_uidx;');
      expect((await store.get(bad.ticket.id))?.status).toBe('FAILED');
      await execSql(database.scratch.url, 'DROP INDEX big_b_uidx; DROP INDEX big_a_idx');
    });

    it('VACUUM is held and runs alone', async () => {
      const result = await impact('VACUUM big');
      expect(result.transactional).toBe(false);
      expect(result.locks[0]).toMatchObject({ mode: 'SHARE UPDATE EXCLUSIVE', blocks: 'nothing' });
      expect(classifySql('VACUUM big; VACUUM small').decision).toBe('refuse');
    });
  });

  describe('pg-agent impact / sql', () => {
    const workspace = mkdtempSync(join(tmpdir(), 'pgagent-cli-ddl-'));
    const cli = (...argv: string[]) =>
      runPgAgent([...argv.slice(0, 1), '--db', database.scratch.url, '--workspace', workspace, ...argv.slice(1)], {
        cwd: workspace,
        env: { USER: 'tester' },
      });

    beforeAll(() => {
      mkdirSync(join(workspace, '.pgagent'), { recursive: true });
      writeFileSync(
        join(workspace, '.pgagent', 'config.json'),
        JSON.stringify({ safety: { riskThresholds: { smallTableRows: 100, bigTableRows: 1000 } } }),
      );
    });

    it('impact --json has the SPEC §6 DDL fields and keeps every existing one', async () => {
      const run = await cli('impact', '--json', '--', 'CREATE INDEX ON big (a)');
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(Object.keys(out)).toEqual(
        expect.arrayContaining([
          ...IMPACT_JSON_FIELDS,
          'previewed',
          'locks',
          'rewrites',
          'dependents',
          'lint',
          'transactional',
        ]),
      );
      expect(out).toMatchObject({
        previewed: false,
        transactional: true,
        risk: 'HIGH',
        rewrites: [],
        locks: [{ table: 'public.big', mode: 'SHARE', blocks: 'writes' }],
      });
    });

    it('impact prints the lock, size, rewrite and the safer statement for a person', async () => {
      const run = await cli('impact', '--', 'ALTER TABLE big ADD COLUMN x float DEFAULT random()');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('lock: blocks reads and writes of public.big — 3,000 rows,');
      expect(run.stdout).toContain('for the whole run; rewrites the table (ACCESS EXCLUSIVE)');
      expect(run.stdout).toContain('rewrites: public.big (predicted)');
      expect(run.stdout).toContain('safer: ALTER TABLE big ADD COLUMN x float8');
      expect(run.stdout).toContain('risk CRITICAL');
    });

    it('sql holds CREATE INDEX CONCURRENTLY (exit 3, not 4) and says it cannot be rolled back', async () => {
      const run = await cli('sql', '--json', '--', 'CREATE INDEX CONCURRENTLY ON big (b)');
      expect(run.code).toBe(3);
      const out = JSON.parse(run.stdout) as { status: string; impact: { transactional: boolean } };
      expect(out.status).toBe('held');
      expect(out.impact.transactional).toBe(false);
      const text = await cli('impact', '--', 'CREATE INDEX CONCURRENTLY ON big (b)');
      expect(text.stdout).toContain('CANNOT BE ROLLED BACK');
    });
  });
});
