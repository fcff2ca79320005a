/**
 * The statements of one client transaction through the guard, in order, as the rule "a transaction approved
 * as a whole" (README, guard section) needs them: what a person reads (each statement with its values) and
 * what a retry is matched by (each statement's template). guardedTransaction.ts records the writes only.
 */
import { createHash } from 'node:crypto';
import { fingerprintSql, loadParser } from '../../core/sql/parse';

export interface RecordedStatement {
  /** The statement with its values, as the person reads it (extended protocol: `$n` replaced, boundSql.ts). */
  sql: string;
  /** PostgreSQL's fingerprint of the statement's text: constants and `$n` numbers do not change it. */
  template: string;
  /** The guard passed it as a read (true), or it is not a read. */
  read: boolean;
}

/**
 * One template per statement, in order; a read and a write of the same text are different templates, and so
 * is heavy DDL ("h:", heavyDdl.ts: analysed, not executed, when measured; run only in an approved retry), so a
 * ticket's approval of a heavy statement is part of its template key and of its hash (ticketHash).
 */
export async function recordStatement(
  sql: string,
  read: boolean,
  templateText: string = sql,
  heavy = false,
): Promise<RecordedStatement> {
  await loadParser();
  return { sql, read, template: `${read ? 'r' : heavy ? 'h' : 'w'}:${fingerprintSql(templateText)}` };
}

/** A template of heavy DDL (recordStatement). */
export const isHeavyTemplate = (template: string): boolean => template.startsWith('h:');

export class TransactionRecord {
  private readonly recorded: RecordedStatement[] = [];

  add(statement: RecordedStatement): void {
    this.recorded.push(statement);
  }

  amendLast(change: (statement: RecordedStatement) => RecordedStatement): void {
    const last = this.recorded.at(-1);
    if (last) this.recorded[this.recorded.length - 1] = change(last);
  }

  /** The transaction ended (COMMIT, ROLLBACK, or the guard rolled it back): the next one starts empty. */
  clear(): void {
    this.recorded.length = 0;
  }

  get statements(): readonly RecordedStatement[] {
    return this.recorded;
  }

  get writes(): readonly RecordedStatement[] {
    return this.recorded.filter((s) => !s.read);
  }

  /**
   * What an approved transaction ticket is matched by: the templates of its statements in order (values
   * may differ: an ORM's retry sends fresh ids and timestamps; the effects are bounded at COMMIT instead).
   */
  templateKey(): string {
    return templateKeyOf(this.recorded);
  }
}

export function templateKeyOf(statements: readonly Pick<RecordedStatement, 'template'>[]): string {
  return createHash('sha256')
    .update(statements.map((s) => s.template).join('\n'))
    .digest('hex');
}
