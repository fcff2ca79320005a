// The value comparison a guard transaction's retry goes through at its COMMIT (src/guard/transaction/
// valueComparison.ts): a 1,000-statement transaction (inserts with a RETURNING id passed on, a fresh UUID and
// the current time; updates with a WHERE) compared with its approved ticket, statement by statement. Peer in the
// same run: the template key alone (what the guard compared before values were part of the approval).
import { randomUUID } from 'node:crypto';
import { loadParser } from '../src/core/sql/parse';
import type { GuardTransactionStatement } from '../src/core/approvals/ticket';
import type { ReturnedRows } from '../src/guard/transaction/resultCapture';
import { statementValues } from '../src/guard/transaction/statementValues';
import { recordStatement, templateKeyOf } from '../src/guard/transaction/transactionRecord';
import { compareValues } from '../src/guard/transaction/valueComparison';
import { markVarying } from '../src/guard/transaction/varyingValues';
import { percentile, report } from './stats';

const STATEMENTS = 1000;

function transaction(idBase: number): { sql: string[]; returned: Map<number, ReturnedRows> } {
  const sql: string[] = [];
  const returned = new Map<number, ReturnedRows>();
  for (let i = 0; i < STATEMENTS; i += 2) {
    sql.push(
      `INSERT INTO parent (name, token, at) VALUES ('p${i}', '${randomUUID()}', '${new Date().toISOString()}') RETURNING id`,
    );
    returned.set(i, { columns: ['id'], rows: [[String(idBase + i)]] });
    sql.push(`UPDATE child SET parent_id = ${idBase + i}, note = 'n${i}' WHERE id = ${i}`);
  }
  return { sql, returned };
}

async function main(): Promise<void> {
  await loadParser();
  const measured = transaction(1_000_000);
  const rule = { volatile: true, now: Date.now() };
  const varies = await markVarying(
    measured.sql.map((s) => statementValues(s)),
    measured.returned,
    rule,
    () => Promise.resolve(new Set(['id'])),
  );
  const approved: GuardTransactionStatement[] = [];
  for (const [i, s] of measured.sql.entries()) {
    const recorded = await recordStatement(s, false);
    approved.push({ ...recorded, ...(varies[i]?.length ? { varies: varies[i] } : {}) });
  }
  const compare: number[] = [];
  const keys: number[] = [];
  for (let run = 0; run < 25; run++) {
    const retry = transaction(2_000_000 + run * STATEMENTS);
    const statements = retry.sql.map((s) => ({ sql: s, values: () => statementValues(s) }));
    let start = performance.now();
    const differences = compareValues(approved, statements, retry.returned, { volatile: true, now: Date.now() });
    compare.push(performance.now() - start);
    if (differences.length > 0) throw new Error(`the retry differs: ${JSON.stringify(differences[0])}`);
    start = performance.now();
    const recorded = await Promise.all(retry.sql.map((s) => recordStatement(s, false)));
    templateKeyOf(recorded);
    keys.push(performance.now() - start);
  }
  report(`value comparison at COMMIT, ${STATEMENTS} statements (p50)`, percentile(compare, 50), 'ms');
  report(`value comparison at COMMIT, ${STATEMENTS} statements (p95)`, percentile(compare, 95), 'ms');
  report(`peer: recording their templates + key (p50)`, percentile(keys, 50), 'ms');
}

void main();
