// Issue 25: predicates that match (almost) everything. On real data, a filtered write whose preview touches
// ≥ 95 % of its table, or 100× the rows the planner expected, gets a lint finding with the numbers and one
// risk level up; a selective one gets neither; the preview leaves the data as it was.
import { beforeAll, describe, expect, it } from 'vitest';
import { classifySql } from '../../../../src/core/sql/classify';
import { analyzeImpact } from '../../../../src/core/sql/impact';
import { loadParser } from '../../../../src/core/sql/parse';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { ESTIMATE_RULE, MATCHES_ALL_RULE } from '../../../../src/core/sql/sweepingWrites';
import { postgresAvailable } from '../../../support/services';
import { useSchemaDatabase } from '../../../support/shopDatabase';

// accounts: 300 rows, 2 of them closed. events: statistics taken while no row was flagged, then half flagged
// (autovacuum off, so the planner still believes none is).
const SCHEMA = `
CREATE TABLE accounts (id int PRIMARY KEY, status text NOT NULL, note text);
INSERT INTO accounts SELECT g, CASE WHEN g <= 2 THEN 'closed' ELSE 'open' END, NULL FROM generate_series(1, 300) g;
CREATE TABLE events (id int PRIMARY KEY, flagged boolean NOT NULL) WITH (autovacuum_enabled = false);
INSERT INTO events SELECT g, false FROM generate_series(1, 600) g;
ANALYZE accounts; ANALYZE events;
UPDATE events SET flagged = true WHERE id <= 300;
`;

describe.runIf(postgresAvailable)('writes whose predicate sweeps the table (issue 25)', () => {
  const database = useSchemaDatabase(SCHEMA);
  beforeAll(() => loadParser());
  const impact = (sql: string) => analyzeImpact(database.db, classifySql(sql), DEFAULT_SAFETY);
  const rules = (report: Awaited<ReturnType<typeof impact>>) => report.lint.map((l) => l.rule);

  it('a WHERE that matches 298 of 300 rows: a finding with the numbers, HIGH lifted to CRITICAL', async () => {
    const report = await impact("UPDATE accounts SET note = 'checked' WHERE status IS DISTINCT FROM 'closed'");
    expect(report.exactRows).toBe(298);
    expect(report.lint).toContainEqual(
      expect.objectContaining({
        rule: MATCHES_ALL_RULE,
        severity: 'warning',
        message: 'matches 298 of 300 rows of public.accounts (99.3 %): its WHERE filters (almost) nothing',
      }),
    );
    expect(report.risk).toBe('CRITICAL');
    expect(report.warnings.join('\n')).toContain('matches 298 of 300 rows of public.accounts (99.3 %): one level up');
    // The preview (and its count) changed nothing.
    expect((await database.db.query('SELECT count(*)::int AS n FROM accounts WHERE note IS NOT NULL')).rows).toEqual([
      { n: 0 },
    ]);
  });

  it('a DELETE that matches every row through a WHERE is counted before the rows it removed', async () => {
    const report = await impact("DELETE FROM accounts WHERE status IN ('open', 'closed')");
    expect(report.lint.find((l) => l.rule === MATCHES_ALL_RULE)?.message).toBe(
      'matches 300 of 300 rows of public.accounts (100 %): its WHERE filters (almost) nothing',
    );
    expect((await database.db.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([{ n: 300 }]);
  });

  it('exact rows 100× the estimate: a finding with both numbers, one level up; half the table is no sweep', async () => {
    const report = await impact('DELETE FROM events WHERE flagged');
    expect(report.exactRows).toBe(300);
    expect(report.estimatedRows).toBeLessThanOrEqual(3);
    expect(rules(report)).toEqual([ESTIMATE_RULE]);
    expect(report.lint[0]?.message).toMatch(
      new RegExp(`^changes 300 rows where the planner expected ${report.estimatedRows} \\(\\d+×\\)$`),
    );
    expect(report.risk).toBe('CRITICAL');
  });

  it('a selective WHERE and a write without WHERE get neither finding (the latter has its own rule)', async () => {
    const selective = await impact("UPDATE accounts SET note = 'x' WHERE status = 'closed'");
    expect(selective.exactRows).toBe(2);
    expect(rules(selective)).toEqual([]);
    expect(selective.risk).toBe('LOW');
    const unbounded = await impact("UPDATE accounts SET note = 'x'");
    expect(rules(unbounded)).toEqual([]);
    expect(unbounded.risk).toBe('HIGH');
  });

  it('the share is configurable', async () => {
    const strict = await analyzeImpact(database.db, classifySql("UPDATE accounts SET note = 'x' WHERE id > 100"), {
      ...DEFAULT_SAFETY,
      policy: { ...DEFAULT_SAFETY.policy, sweepingWrites: { matchesAllShare: 0.5, estimateFactor: 100 } },
    });
    expect(strict.lint.find((l) => l.rule === MATCHES_ALL_RULE)?.message).toBe(
      'matches 200 of 300 rows of public.accounts (66.7 %): its WHERE filters (almost) nothing',
    );
    expect(rules(await impact("UPDATE accounts SET note = 'x' WHERE id > 100"))).toEqual([]);
  });
});
