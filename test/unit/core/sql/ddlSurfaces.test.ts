import { beforeAll, describe, expect, it } from 'vitest';
import { renderImpact } from '../../../../src/core/present/renderImpact';
import type { ImpactReport } from '../../../../src/shared/impactReport';
import { lintForModel, lintStatement } from '../../../../src/core/sql/ddl/lint';
import { planStatement } from '../../../../src/core/sql/ddl/lockModel';
import { loadParser } from '../../../../src/core/sql/parse';
import { describeLock } from '../../../../src/shared/lockPhrases';
import { parseWebviewMessage } from '../../../../src/shared/panelMessages';
import { impactReport } from '../../../support/impactReports';

beforeAll(async () => {
  await loadParser();
});

const TICKET = 'tkt_abcdefghijklmnopqrst';

describe('"Use the safer statement" intent', () => {
  it('names the ticket and the lint rule, never the SQL', () => {
    expect(
      parseWebviewMessage({ type: 'useSaferSql', ticketId: TICKET, rule: 'require-concurrent-index-creation' }),
    ).toMatchObject({ ok: true });
  });

  it.each([
    [
      'SQL of its own',
      { type: 'useSaferSql', ticketId: TICKET, rule: 'require-concurrent-index-creation', sql: 'DROP TABLE orders' },
    ],
    ['a rule that is not a rule name', { type: 'useSaferSql', ticketId: TICKET, rule: 'DROP TABLE orders' }],
    ['no rule', { type: 'useSaferSql', ticketId: TICKET }],
    ['a bad ticket id', { type: 'useSaferSql', ticketId: '../x', rule: 'ban-cluster' }],
  ])('refuses %s', (_what, raw) => {
    expect(parseWebviewMessage(raw)).toMatchObject({ ok: false });
  });
});

describe('lock phrases (the same in the terminal, the card and the CodeLens)', () => {
  it('says what a rewrite blocks, on what table and size, for how long', () => {
    expect(
      describeLock({
        table: 'public.orders',
        mode: 'ACCESS EXCLUSIVE',
        blocks: 'reads and writes',
        work: 'rewrite',
        rows: 2_100_000,
        bytes: 180 * 1024 * 1024,
      }),
    ).toBe(
      'blocks reads and writes of public.orders — 2.1M rows, 180 MB — for the whole run; rewrites the table (ACCESS EXCLUSIVE)',
    );
    expect(
      describeLock({
        table: 't',
        mode: 'SHARE UPDATE EXCLUSIVE',
        blocks: 'nothing',
        work: 'scan',
        rows: null,
        bytes: 8192,
      }),
    ).toBe(
      'takes SHARE UPDATE EXCLUSIVE on t — rows unknown (never analysed), 8 kB (blocks no reads or writes), reads every row',
    );
  });
});

describe('lint without a database', () => {
  const lint = (sql: string, inUse = true) => {
    const plan = planStatement(sql);
    return lintStatement({
      sql,
      kind: plan.kind,
      changes: plan.changes,
      locks: plan.locks,
      inUse: () => inUse,
      notSmall: () => true,
      rewrites: false,
      notNullProven: () => false,
      lockTimeoutMs: 5000,
    });
  };

  it('offers no safer statement it could not parse back as the intended one', () => {
    // Two indexes: DROP INDEX CONCURRENTLY takes only one, so no saferSql (the advice still says what to do).
    const findings = lint('DROP INDEX a, b');
    const finding = findings.find((f) => f.rule === 'require-concurrent-index-deletion');
    expect(finding?.advice).toContain('DROP INDEX CONCURRENTLY');
    expect(finding?.saferSql).toBeUndefined();
    expect(lint('DROP INDEX a').find((f) => f.rule === 'require-concurrent-index-deletion')?.saferSql).toBe(
      'DROP INDEX CONCURRENTLY a',
    );
  });

  it('names an unnamed CHECK so that the VALIDATE step can refer to it', () => {
    const finding = lint('ALTER TABLE t ADD CHECK (a > 0)').find((f) => f.rule === 'constraint-missing-not-valid');
    expect(finding?.saferSql).toBe('ALTER TABLE t ADD CONSTRAINT t_check CHECK (a > 0) NOT VALID');
    expect(finding?.advice).toContain('VALIDATE CONSTRAINT t_check');
  });

  it('says nothing about an index on an empty table', () => {
    expect(lint('CREATE INDEX ON t (a)', false).map((f) => f.rule)).not.toContain('require-concurrent-index-creation');
  });

  it("gives the job's model the findings with their safer form", () => {
    expect(lintForModel(lint('CREATE INDEX ON t (a)'))).toContain('Safer: CREATE INDEX CONCURRENTLY ON t (a)');
  });
});

describe('renderImpact of DDL', () => {
  const base: ImpactReport = impactReport({
    statements: ['CREATE INDEX CONCURRENTLY ON t (a)'],
    estimatedRows: null,
    exactRows: null,
    risk: 'MEDIUM',
    previewMs: 12,
    warnings: ['Cannot be rolled back: it runs outside a transaction, alone, once approved.'],
    previewed: false,
    locks: [
      {
        table: 'public.t',
        mode: 'SHARE UPDATE EXCLUSIVE',
        blocks: 'nothing',
        work: 'scan',
        rows: 2_000_000,
        bytes: 100 * 1024 * 1024,
        waitsBehind: 0,
        why: '',
      },
    ],
    transactional: false,
  });

  it('says once that it cannot be rolled back, that it was analysed, and what it locks', () => {
    const text = renderImpact(base);
    expect(text.match(/rolled back/gi)).toHaveLength(1);
    expect(text).toContain('not previewed (analysed in 12 ms)');
    expect(text).toContain(
      'lock: takes SHARE UPDATE EXCLUSIVE on public.t — 2.0M rows, 100 MB (blocks no reads or writes), reads every row',
    );
    expect(text).not.toContain('no rows change');
  });

  it('names the sessions in the way of its lock (issue 25)', () => {
    const holder = {
      pid: 4242,
      table: 'public.t',
      mode: 'ACCESS SHARE' as const,
      granted: true,
      user: 'app',
      application: null,
      state: 'idle in transaction',
      stateSeconds: 720,
      transactionSeconds: 720,
      query: 'SELECT 1',
    };
    expect(renderImpact({ ...base, lockHolders: [holder] })).toContain(
      'in the way: pid 4242 (user app, idle in transaction for 12 min, holds ACCESS SHARE on public.t; query: SELECT 1)',
    );
  });

  it('reads an impact stored before the DDL fields existed', () => {
    const { previewed: _p, locks: _l, rewrites: _r, dependents: _d, lint: _li, transactional: _t, ...old } = base;
    expect(() => renderImpact(old as ImpactReport)).not.toThrow();
  });
});
