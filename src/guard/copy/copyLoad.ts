/**
 * `COPY t FROM STDIN` outside a transaction (psql's `\copy t from file`): nothing reaches the table unless a
 * person approved exactly what runs. The guard answers CopyInResponse itself (the COPY never goes upstream),
 * keeps the client's data up to MAX_COPY_LOAD_BYTES, and has the SERVER read it (never a home-made COPY
 * parser): in the client's own upstream session, inside BEGIN READ WRITE … ROLLBACK, the data is copied with
 * the client's own options into a temporary table of `text` columns named like the target's (no event trigger
 * may exist, so no code of the database runs), and the server quotes each value as a literal. The ticket's
 * statement is then `INSERT INTO t (cols) VALUES (…), …` with those literals: PostgreSQL turns each one into its
 * column's type with the type's input function and typmod, as COPY does. It is held like any write; the
 * identical retry (same COPY, same bytes) builds the identical INSERT and so finds the same ticket, and once it
 * is approved runs it once; the client gets `COPY n`. Not taken (PA002): binary format, `WHERE`, options other
 * than the text/CSV ones, more than MAX_COPY_LOAD_BYTES. An INSERT differs from COPY in one way: it applies the
 * table's rules (COPY ignores them); the ticket shows the INSERT that runs.
 */
import type { Db } from '../../core/db/db';
import { parseSql } from '../../core/sql/parse';
import type { ParsedInput } from '../../core/sql/parse';
import { arr, isRec, rec, str } from '../../core/sql/parseTree';
import type { CopiedData } from './copyIn';
import { CopyInRelay } from './copyIn';
import { quoted } from '../judge/copyStatement';
import type { GuardContext } from '../guardContext';
import type { HeldEvents } from '../hold/heldAnswer';
import { failedError, heldError, refusedError } from '../hold/heldMessages';
import { holdOrRun } from '../hold/heldStatement';
import { judgeSql } from '../judge/judge';
import { commandComplete, copyInResponse, errorResponse, readyForQuery } from '../wire/backendMessages';
import type { ErrorFields } from '../wire/backendMessages';
import type { FrontendMessage } from '../wire/frontendMessages';

/** Data a held COPY may bring (its INSERT is parsed, checked and previewed like any statement). */
export const MAX_COPY_LOAD_BYTES = 1024 * 1024;

/** COPY FROM options the temporary table takes exactly as the target would (they shape parsing only). */
const OPTIONS = new Set([
  'format',
  'delimiter',
  'null',
  'header',
  'quote',
  'escape',
  'force_not_null',
  'force_null',
  'encoding',
]);

interface Target {
  table: string;
  /** Quoted names; undefined: all columns but generated ones, asked from the catalog. */
  columns: string[] | undefined;
  options: string;
}

export interface LoadDeps {
  context: GuardContext;
  db: Db;
  user: string;
  events: HeldEvents;
  inBand: { run(sql: string, trailing?: Uint8Array): Promise<{ rows: (string | null)[][]; error?: string }> };
  answer(bytes: Uint8Array): Promise<void>;
}

export class CopyLoad {
  private target: (Target & { columns: string[]; overriding: boolean }) | undefined;
  private data: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly deps: LoadDeps) {}

  get active(): boolean {
    return this.target !== undefined;
  }

  /** A held `COPY … FROM STDIN` outside a transaction: CopyInResponse, or its refusal (then true all the same). */
  /** `parsed`: the parse of exactly `sql`, when the caller has it. */
  async start(sql: string, parsed?: ParsedInput): Promise<boolean> {
    const target = targetOf(sql, parsed);
    if (target === undefined) return false;
    if ('problem' in target) return this.end(refusedError(target.problem)).then(() => true);
    const catalog = await this.deps.inBand.run(columnsSql(target.table));
    if (catalog.error !== undefined)
      return this.end(refusedError(`COPY ${target.table} FROM STDIN: ${catalog.error}`)).then(() => true);
    const names = new Map(catalog.rows.map(([name, identity]) => [quoted(name ?? ''), identity]));
    const columns = target.columns ?? [...names.keys()];
    this.target = { ...target, columns, overriding: columns.some((c) => names.get(c) === 'a') };
    this.data = [];
    this.bytes = 0;
    await this.deps.answer(copyInResponse(columns.length));
    return true;
  }

  /** The client's CopyData, CopyDone or CopyFail (or another message: a protocol error that ends the COPY). */
  async receive(raw: Uint8Array, type: string, failure?: string): Promise<void> {
    const target = this.target;
    if (!target || type === 'flush' || type === 'sync') return;
    if (type === 'copyData') {
      this.bytes += raw.byteLength - 5;
      if (this.bytes <= MAX_COPY_LOAD_BYTES) this.data.push(Buffer.from(raw));
      return;
    }
    this.target = undefined;
    const data = this.data;
    this.data = [];
    if (type === 'copyFail') return this.end({ code: '57014', message: `COPY from stdin failed: ${failure ?? ''}` });
    if (type !== 'copyDone')
      return this.end({ code: '08P01', message: `unexpected message type ${type} during COPY from stdin` });
    if (this.bytes > MAX_COPY_LOAD_BYTES) {
      return this.end(
        refusedError(
          `COPY … FROM STDIN through the guard takes at most ${MAX_COPY_LOAD_BYTES} bytes of data; this one sent ${this.bytes}; nothing was kept`,
          'Load it inside BEGIN … COMMIT (psql -1): the transaction is measured and held as a whole; or load it directly as its owner.',
        ),
      );
    }
    try {
      await this.hold(target, data);
    } catch (error) {
      await this.end(failedError(error));
    }
  }

  private async hold(target: Target & { columns: string[]; overriding: boolean }, data: Buffer[]): Promise<void> {
    const parsed = await this.deps.inBand.run(
      loadSql(target),
      Buffer.concat([...data, Buffer.from([0x63, 0, 0, 0, 4])]),
    );
    if (parsed.error !== undefined) {
      await this.deps.inBand.run('ROLLBACK');
      return this.end(refusedError(`COPY ${target.table} FROM STDIN: ${parsed.error}; nothing was kept`));
    }
    const [count, values] = parsed.rows.at(-1) ?? [];
    if (Number(count) === 0 || values == null) return this.done(['COPY 0']);
    const insert = `INSERT INTO ${target.table} (${target.columns.join(', ')})${target.overriding ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES\n${values}`;
    const verdict = await judgeSql(this.deps.db, insert);
    if (verdict.kind !== 'hold')
      return this.end(
        verdict.kind === 'refuse'
          ? refusedError(verdict.reasons.join('; '))
          : refusedError(`the INSERT built from this COPY was not judged a write (${verdict.kind})`),
      );
    const { context, user, events } = this.deps;
    const outcome = await holdOrRun(context, insert, verdict.classification, `guard user ${user}`, events.awaiting);
    if (outcome.kind === 'executed') {
      events.executed?.(outcome.ticket.id);
      return this.done([`COPY ${count ?? 0}`]);
    }
    if (outcome.kind === 'refused') return this.end(refusedError(outcome.message, outcome.hint));
    events.held(outcome.ticket.id);
    return this.end(heldError(outcome.ticket, outcome.reused));
  }

  private done(tags: string[]): Promise<void> {
    return this.deps.answer(Buffer.concat([...tags.map(commandComplete), readyForQuery('I')]));
  }

  private end(error: ErrorFields): Promise<void> {
    return this.deps.answer(Buffer.concat([errorResponse(error), readyForQuery('I')]));
  }
}

/** The target, columns and options of a `COPY … FROM STDIN`; undefined for any other statement. */
function targetOf(sql: string, parsed?: ParsedInput): Target | { problem: string } | undefined {
  const statements = (parsed?.input === sql ? parsed : parseSql(sql)).statements;
  const node = statements.length === 1 ? rec(statements[0]!.tree, 'CopyStmt') : undefined;
  if (!node || node.is_from !== true || node.is_program === true || str(node, 'filename') !== undefined)
    return undefined;
  const relation = rec(node, 'relation');
  const relname = str(relation, 'relname');
  if (relname === undefined || str(relation, 'catalogname') !== undefined)
    return { problem: 'this COPY names no table the guard can load' };
  if (node.whereClause !== undefined)
    return {
      problem:
        'COPY … FROM STDIN WHERE … does not pass through the guard outside a transaction; filter the rows before loading them',
    };
  const schema = str(relation, 'schemaname');
  const table = `${schema !== undefined ? `${quoted(schema)}.` : ''}${quoted(relname)}`;
  const attlist = arr(node, 'attlist').map((a) => str(rec(a, 'String'), 'sval'));
  const options: string[] = [];
  for (const option of arr(node, 'options')) {
    const def = rec(option, 'DefElem');
    const name = str(def, 'defname') ?? '';
    const value = optionValue(def?.arg);
    if (
      !OPTIONS.has(name) ||
      value === undefined ||
      (name === 'format' && !['text', 'csv'].includes(value.toLowerCase().replace(/'/g, '')))
    ) {
      return {
        problem: `COPY option ${name}${value ? ` ${value}` : ''} is not taken by the guard outside a transaction (text or CSV data only)`,
      };
    }
    options.push(`${name.toUpperCase()} ${value}`);
  }
  return {
    table,
    columns: attlist.length > 0 ? attlist.map((c) => quoted(c ?? '')) : undefined,
    options: options.length > 0 ? ` (${options.join(', ')})` : '',
  };
}

/** An option's argument as SQL: a literal, a boolean, or a column list; undefined for anything else. */
function optionValue(arg: unknown): string | undefined {
  if (arg === undefined) return 'true';
  if (!isRec(arg)) return undefined;
  const text = str(rec(arg, 'String'), 'sval');
  if (text !== undefined) return `'${text.replace(/'/g, "''")}'`;
  const bool = rec(arg, 'Boolean');
  if (bool) return bool.boolval === true ? 'true' : 'false';
  const int = rec(arg, 'Integer');
  if (int) return String(Number(int.ival ?? 0));
  const list = rec(arg, 'List');
  if (list) {
    const names = arr(list, 'items').map((i) => str(rec(i, 'String'), 'sval'));
    return names.every((n) => n !== undefined) ? `(${names.map((n) => quoted(n)).join(', ')})` : undefined;
  }
  return undefined;
}

function columnsSql(table: string): string {
  return `SELECT attname, attidentity FROM pg_catalog.pg_attribute WHERE attrelid = '${table.replace(/'/g, "''")}'::pg_catalog.regclass AND attnum OPERATOR(pg_catalog.>) 0 AND NOT attisdropped AND attgenerated OPERATOR(pg_catalog.=) '' ORDER BY attnum`;
}

/**
 * The server reads the data (the CopyData that follow this query) into text columns and quotes each value;
 * everything is rolled back. It stops before creating anything when an event trigger could run.
 */
function loadSql(target: Target & { columns: string[] }): string {
  const temp = 'pg_temp.pgagent_copy_load';
  const literal = (c: string) => `pg_catalog.quote_nullable(${c})`;
  return [
    'BEGIN READ WRITE',
    // Only the server's own functions and operators, whatever a schema on the path defines.
    'SET LOCAL search_path = pg_catalog, pg_temp',
    "DO $pgagent$ BEGIN IF EXISTS (SELECT FROM pg_catalog.pg_event_trigger WHERE evtenabled <> 'D') THEN RAISE EXCEPTION 'an event trigger exists: the guard does not create its temporary table to read COPY data'; END IF; END $pgagent$",
    `CREATE TEMPORARY TABLE pgagent_copy_load (${target.columns.map((c) => `${c} text`).join(', ')}) ON COMMIT DROP`,
    `COPY ${temp} (${target.columns.join(', ')}) FROM STDIN${target.options}`,
    `SELECT count(*), string_agg('(' || concat_ws(', ', ${target.columns.map(literal).join(', ')}) || ')', E',\\n' ORDER BY ctid) FROM ${temp}`,
    'ROLLBACK',
  ].join(';\n');
}

/** A client's COPY messages, whichever side reads them: the guard (a load outside a transaction) or the upstream (a measured COPY). */
export class ClientCopy {
  readonly load: CopyLoad;
  readonly relay: CopyInRelay;

  constructor(deps: LoadDeps, upstream: (bytes: Uint8Array) => void, copied: (data: CopiedData) => void) {
    this.load = new CopyLoad(deps);
    this.relay = new CopyInRelay(upstream, copied);
  }

  /** True when `message` was COPY's to take (the session does nothing more with it). */
  async take(raw: Uint8Array, message: FrontendMessage): Promise<boolean> {
    if (message.type === 'terminate') return false;
    if (this.load.active) {
      await this.load.receive(raw, message.type, message.type === 'copyFail' ? message.message : undefined);
      return true;
    }
    this.relay.interrupt(message.type);
    if (message.type !== 'copyData' && message.type !== 'copyDone' && message.type !== 'copyFail') return false;
    this.relay.relay(raw, message.type);
    return true;
  }
}
