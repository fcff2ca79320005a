/** The validation's check goes to the step that runs the same SQL once, and only to it. */
import { describe, expect, it } from 'vitest';
import { CarriedChecks } from '../../../../src/core/ask/carriedChecks';
import type { Db } from '../../../../src/core/db/db';
import type { CheckedSql } from '../../../../src/core/sql/reach/checkSql';

const db = { label: 'test' } as unknown as Db;
const checkOf = (sql: string): CheckedSql => ({
  db,
  sql,
  parsed: { input: sql, statements: [], version: 0, indexOfByte: (b) => b },
  classification: { statements: [], class: 'read', decision: 'run', reasons: [] },
});

describe('CarriedChecks', () => {
  it('gives a check once, to exactly its SQL', () => {
    const checks = new CarriedChecks();
    checks.keep(checkOf('SELECT 1'));
    expect(checks.take('SELECT 2')).toBeUndefined();
    expect(checks.take('SELECT 1 ')).toBeUndefined();
    expect(checks.take('SELECT 1')?.sql).toBe('SELECT 1');
    expect(checks.take('SELECT 1')).toBeUndefined();
  });

  it('keeps the latest checks of runs that never took theirs, not all of them', () => {
    const checks = new CarriedChecks();
    for (let i = 0; i < 40; i++) checks.keep(checkOf(`SELECT ${i}`));
    expect(checks.take('SELECT 0')).toBeUndefined();
    expect(checks.take('SELECT 39')?.sql).toBe('SELECT 39');
    expect(checks.take('SELECT 24')?.sql).toBe('SELECT 24');
    expect(checks.take('SELECT 23')).toBeUndefined();
  });

  it('a check kept again for the same SQL replaces the older one', () => {
    const checks = new CarriedChecks();
    const first = checkOf('SELECT 1');
    const second = checkOf('SELECT 1');
    checks.keep(first);
    checks.keep(second);
    expect(checks.take('SELECT 1')).toBe(second);
    expect(checks.take('SELECT 1')).toBeUndefined();
  });
});
