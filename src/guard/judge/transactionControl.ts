/** Which transaction control a client message holds, read by PostgreSQL's grammar (never a text search). */
import { loadParser } from '../../core/sql/parse';
import { parsedText } from './parsedText';
import { TextMemo } from './textMemo';

type Control = 'commit' | 'rollback' | 'other';

const controls = new TextMemo<readonly Control[]>();

/** For each statement of `sql` that is transaction control, what it does; empty when none is (or it does not parse). */
export function transactionControlOf(sql: string): Promise<readonly Control[]> {
  return controls.get(sql, () => controlOf(sql));
}

/** What transactionControlOf answered for `sql` before (without waiting), or undefined: not known yet. */
export function knownTransactionControlOf(sql: string): readonly Control[] | undefined {
  return controls.known(sql);
}

async function controlOf(sql: string): Promise<readonly Control[]> {
  await loadParser();
  try {
    return parsedText(sql)
      .statements.filter((s) => s.kind === 'TransactionStmt')
      .map((s) => {
        const kind = String((s.tree as { TransactionStmt?: { kind?: string; chain?: boolean } }).TransactionStmt?.kind);
        const chain = (s.tree as { TransactionStmt?: { chain?: boolean } }).TransactionStmt?.chain === true;
        if (chain) return 'other';
        return kind === 'TRANS_STMT_COMMIT' ? 'commit' : kind === 'TRANS_STMT_ROLLBACK' ? 'rollback' : 'other';
      });
  } catch {
    return [];
  }
}

/** The whole message is one COMMIT or one ROLLBACK (what ends the client's transaction). */
export async function endsTransaction(sql: string): Promise<boolean> {
  const control = await transactionControlOf(sql);
  return control.length === 1 && control[0] !== 'other' && (await statementCount(sql)) === 1;
}

export async function statementCount(sql: string): Promise<number> {
  await loadParser();
  try {
    return parsedText(sql).statements.length;
  } catch {
    return 0;
  }
}
