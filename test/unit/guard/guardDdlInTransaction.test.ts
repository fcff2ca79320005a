/**
 * DDL inside a measured guard transaction (src/guard/transaction/): the DDL identity an approved retry must
 * carry (its text, since PostgreSQL's fingerprint ignores constants) and the lock budget set before DDL runs.
 */
import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../../src/core/approvals/ticket';
import { fingerprintSql, loadParser } from '../../../src/core/sql/parse';
import { DDL_LOCK_BUDGET_MS, lockBudgetSql } from '../../../src/guard/transaction/ddlInTransaction';
import { ddlStatementsOf, exceededBounds } from '../../../src/guard/transaction/effectBounds';

const ticket = { impact: { tables: [] } } as unknown as Ticket;

describe('the DDL identity of a guarded transaction', () => {
  it('keeps the text of every statement that is not DML, in order, from a ticket body with its header comment', async () => {
    await loadParser();
    const body =
      "-- pg-agent guard: one client transaction, templates abc\nUPDATE knex_migrations_lock SET is_locked = 1;\nCREATE TABLE w (id int, label varchar(10));\nINSERT INTO w VALUES (1, 'a');\nCREATE INDEX w_label ON w (label);";
    expect(ddlStatementsOf(body)).toEqual([
      'CREATE TABLE w (id int, label varchar(10))',
      'CREATE INDEX w_label ON w (label)',
    ]);
  });

  it('refuses DDL whose template matches but whose text differs (a longer varchar, another DEFAULT)', async () => {
    await loadParser();
    const approved = ddlStatementsOf('CREATE TABLE w (label varchar(10) DEFAULT 1)');
    const wider = ddlStatementsOf('CREATE TABLE w (label varchar(1000) DEFAULT 2)');
    expect(fingerprintSql(approved[0]!)).toBe(fingerprintSql(wider[0]!));
    expect(exceededBounds({ changed: [], ddl: wider }, ticket, approved, 0)).toEqual([
      'DDL not in the ticket: CREATE TABLE w (label varchar(1000) DEFAULT 2)',
    ]);
    expect(exceededBounds({ changed: [], ddl: approved }, ticket, approved, 0)).toEqual([]);
    expect(exceededBounds({ changed: [], ddl: [...approved, ...approved] }, ticket, approved, 0)).toHaveLength(1);
  });
});

describe('the lock budget before DDL runs in a measured transaction', () => {
  it('is at most 250 ms, lowers only a longer or unset setting, is local to the transaction, and bounds idle pauses after a blocking lock', () => {
    const cheap = lockBudgetSql({ ddlLockTimeoutMs: 100 }, false);
    expect(cheap).toContain(
      "set_config('lock_timeout', (SELECT CASE WHEN setting::int = 0 OR setting::int > 100 THEN '100ms' ELSE setting || 'ms' END FROM pg_settings WHERE name = 'lock_timeout'), true)",
    );
    expect(cheap).not.toContain('idle_in_transaction_session_timeout');
    expect(lockBudgetSql({ ddlLockTimeoutMs: 5_000 }, false)).toContain(`THEN '${DDL_LOCK_BUDGET_MS}ms'`);
    expect(lockBudgetSql({ ddlLockTimeoutMs: 100 }, true)).toContain(
      `set_config('statement_timeout', (SELECT CASE WHEN setting::int = 0 OR setting::int > ${DDL_LOCK_BUDGET_MS} THEN`,
    );
    expect(lockBudgetSql({ ddlLockTimeoutMs: 100 }, true)).toContain(
      `set_config('idle_in_transaction_session_timeout', (SELECT CASE WHEN setting::int = 0 OR setting::int > ${DDL_LOCK_BUDGET_MS} THEN`,
    );
  });
});
