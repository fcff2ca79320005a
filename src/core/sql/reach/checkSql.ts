/**
 * The one check every path runs before SQL touches a database (SPEC §5 1, 1a): the parser's classification,
 * then the reach of each statement into the database's own code, merged into one verdict. A read whose reach
 * has an effect is no longer a read; a write whose reach ROLLBACK cannot undo is not previewed.
 */
import type { Db } from '../../db/db';
import type { Classification } from '../classification';
import { classifyParsed } from '../classify';
import { loadParser, parseSql } from '../parse';

/** Classifies `sql` and checks its reach on `db`. Throws like classifySql. (Reach wiring in progress.) */
export async function checkSql(db: Db, sql: string): Promise<Classification> {
  void db;
  await loadParser();
  const classification = classifyParsed(parseSql(sql));
  for (const statement of classification.statements) statement.reach = [];
  return classification;
}
