import { describe, expect, it } from 'vitest';
import type { Classification, StatementClassification } from '../../../../src/core/sql/classification';
import { assessRisk, DEFAULT_RISK_POLICY, requiresApproval } from '../../../../src/core/sql/risk';

function classification(overrides: Partial<StatementClassification> = {}): Classification {
  const statement: StatementClassification = {
    sql: 'DELETE FROM orders WHERE id = 1',
    offset: 0,
    kind: 'DeleteStmt',
    nodeKinds: ['DeleteStmt'],
    class: 'write',
    decision: 'approve',
    reasons: [],
    writesTo: ['orders'],
    tables: ['orders'],
    unboundedWrite: false,
    destructive: false,
    sideEffects: [],
    transactional: true,
    ...overrides,
  };
  return { statements: [statement], class: statement.class, decision: statement.decision, reasons: [] };
}

describe('assessRisk (SPEC §5.5)', () => {
  it.each([
    [0, 'LOW'],
    [10, 'LOW'],
    [11, 'MEDIUM'],
    [100, 'MEDIUM'],
    [101, 'HIGH'],
    [1000, 'HIGH'],
    [1001, 'CRITICAL'],
  ])('%i rows → %s', (rows, risk) => {
    expect(
      assessRisk({ classification: classification(), rows, tables: ['public.orders'] }, DEFAULT_RISK_POLICY).risk,
    ).toBe(risk);
  });

  it('makes DROP/TRUNCATE/destructive ALTER CRITICAL whatever the rows', () => {
    expect(
      assessRisk({ classification: classification({ destructive: true }), rows: 0, tables: [] }, DEFAULT_RISK_POLICY)
        .risk,
    ).toBe('CRITICAL');
  });

  it('makes UPDATE/DELETE without WHERE at least HIGH', () => {
    expect(
      assessRisk({ classification: classification({ unboundedWrite: true }), rows: 3, tables: [] }, DEFAULT_RISK_POLICY)
        .risk,
    ).toBe('HIGH');
    expect(
      assessRisk(
        { classification: classification({ unboundedWrite: true }), rows: 5000, tables: [] },
        DEFAULT_RISK_POLICY,
      ).risk,
    ).toBe('CRITICAL');
  });

  it('raises critical tables one level, by bare or qualified name', () => {
    const policy = { ...DEFAULT_RISK_POLICY, criticalTables: ['payments'] };
    const result = assessRisk({ classification: classification(), rows: 5, tables: ['public.payments'] }, policy);
    expect(result.risk).toBe('MEDIUM');
    expect(result.reasons.join(' ')).toContain('public.payments');
    expect(
      assessRisk(
        { classification: classification(), rows: 5, tables: ['public.orders'] },
        { ...DEFAULT_RISK_POLICY, criticalTables: ['public.orders'] },
      ).risk,
    ).toBe('MEDIUM');
  });

  it('honours configured thresholds', () => {
    const policy = {
      ...DEFAULT_RISK_POLICY,
      thresholds: { ...DEFAULT_RISK_POLICY.thresholds, low: 1, medium: 2, high: 3 },
    };
    expect(assessRisk({ classification: classification(), rows: 3, tables: [] }, policy).risk).toBe('HIGH');
  });
});

describe('requiresApproval', () => {
  it('always asks by default', () => {
    expect(requiresApproval(classification(), 'LOW', DEFAULT_RISK_POLICY)).toBe(true);
  });

  it('lets plain writes up to the configured risk through, never DDL', () => {
    const policy = { ...DEFAULT_RISK_POLICY, autoApproveMaxRisk: 'MEDIUM' as const };
    expect(requiresApproval(classification(), 'MEDIUM', policy)).toBe(false);
    expect(requiresApproval(classification(), 'HIGH', policy)).toBe(true);
    expect(requiresApproval(classification({ class: 'ddl' }), 'LOW', policy)).toBe(true);
  });
});
