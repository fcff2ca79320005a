/** Placeholder until the reach engine lands: nothing reached. */
import type { Db } from '../../db/db';
import type { ParsedStatement } from '../parse';
import type { StatementReach } from './reachTypes';

export function reachOf(db: Db, statements: readonly ParsedStatement[]): Promise<StatementReach[]> {
  void db;
  return Promise.resolve(statements.map(() => ({ entries: [], effects: [], sequences: [] })));
}
