/**
 * One page of a database's tables for a list (MCP `list_tables`): in schema then name order, optionally one
 * schema's, resumed after the last one listed (an opaque cursor naming it, so a page is stable while tables are
 * added or dropped elsewhere). 50,000 tables are listed a page at a time, never all at once.
 */
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import { AgentError } from '../platform/errors';

export const DEFAULT_PAGE = 500;
export const MAX_PAGE = 1000;

export interface TablePage {
  tables: TableInfo[];
  /** Tables matching the request (the schema's, or all), across every page. */
  total: number;
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

const encode = (t: TableInfo) => Buffer.from(JSON.stringify([t.schema, t.name])).toString('base64url');

function decode(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      return value as [string, string];
    }
  } catch {
    // reported below
  }
  throw new AgentError(
    'BAD_INPUT',
    `The cursor "${cursor.slice(0, 40)}" is not one list_tables gave.`,
    'Pass the nextCursor of the previous page unchanged, or leave cursor out to start at the first page.',
  );
}

const order = (a: TableInfo, b: TableInfo) =>
  a.schema === b.schema ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.schema < b.schema ? -1 : 1;

export function tablePage(
  snapshot: SchemaSnapshot,
  request: { schema?: string; cursor?: string; limit?: number } = {},
): TablePage {
  const limit = request.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new AgentError('BAD_INPUT', `limit must be a whole number from 1 to ${MAX_PAGE}, got ${String(limit)}.`);
  }
  const all = (
    request.schema === undefined ? snapshot.tables : snapshot.tables.filter((t) => t.schema === request.schema)
  )
    .slice()
    .sort(order);
  let start = 0;
  if (request.cursor !== undefined) {
    const [schema, name] = decode(request.cursor);
    const after = { schema, name } as TableInfo;
    start = all.findIndex((t) => order(t, after) > 0);
    if (start < 0) start = all.length;
  }
  const tables = all.slice(start, start + limit);
  const last = tables.at(-1);
  return {
    tables,
    total: all.length,
    ...(last && start + limit < all.length ? { nextCursor: encode(last) } : {}),
  };
}
