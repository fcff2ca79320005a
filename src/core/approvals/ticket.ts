/**
 * Approval tickets (SPEC §5.3): a person's decision about one exact statement (a `write` ticket) or one
 * exact plan of a job (a `plan` ticket) on one connection, with its impact, risk and expiry; single use,
 * and verified again when it is executed.
 */
import { createHash } from 'node:crypto';
import type { ImpactReport, Risk } from '../../shared/impactReport';

export type TicketStatus =
  | 'PENDING_APPROVAL'
  | 'APPROVED'
  | 'REJECTED'
  | 'EXPIRED'
  /** Claimed by an execution in progress: no one else can use it. */
  | 'EXECUTING'
  | 'EXECUTED'
  /** Execution was attempted and rolled back; the ticket is spent. */
  | 'FAILED';

export type TicketAction =
  'created' | 'approved' | 'rejected' | 'expired' | 'claimed' | 'released' | 'executed' | 'failed';

/** A write runs SQL; a plan lets a job go from its reviewed plan to execution. */
export type TicketKind = 'write' | 'plan';

/**
 * Where a write ticket's SQL comes from: statements any path runs as the ticket holds them (`exec`,
 * execute_approved, VS Code, a guard client's identical statement), or one client transaction through
 * `pg-agent guard` (issue 24 P4), which only that client's own retry through the guard may commit: its
 * statements carry the values of one measured run (a RETURNING id the client used later), so a replay of
 * them would be wrong. A ticket stored before origins existed has none and is a 'statement' ticket.
 */
export type TicketOrigin = 'statement' | 'guardTransaction';

/** One statement of a client transaction through the guard, in the order the client sent it. */
export interface GuardTransactionStatement {
  /** The statement with its values, as the person reads it (extended protocol: `$n` replaced). */
  sql: string;
  /** What a retry is matched by: "r:"/"w:" and PostgreSQL's fingerprint of the text (values do not change it). */
  template: string;
  /** The guard passed it as a read. */
  read: boolean;
  /**
   * The values of this statement that its approved retry may carry differently ("varies on retry" on the card),
   * by their position among the statement's constants; every other value must be identical. Absent: none.
   */
  varies?: GuardVaryingValue[];
}

/**
 * A value of a guard transaction's statement that may differ in its retry, and how: `returned`, a value the
 * server produced earlier in the same transaction (statement `from`'s result, row `row`, column `column`), which
 * in the retry must equal what that statement returned there; `uuid`, a fresh random (v4) UUID the client made;
 * `timestamp`, the client's current time (within the window of the retry's clock); `same`, the value of another
 * varying place (`from` statement, `at` position), which in the retry must be that place's value again.
 */
export interface GuardVaryingValue {
  /** 0-based position among the statement's constants, in the order of the text. */
  at: number;
  kind: 'returned' | 'uuid' | 'timestamp' | 'same';
  /** The value in the measured run (what the card shows). */
  value: string;
  /** 0-based index of the statement it comes from (`returned`, `same`). */
  from?: number;
  row?: number;
  column?: string;
  /** `same`: the position in statement `from`. */
  fromAt?: number;
}

/** Rows one table changed (pg_stat_xact_user_tables: cascades and triggers included). */
export interface MeasuredTableEffect {
  schema: string;
  name: string;
  inserted: number;
  updated: number;
  deleted: number;
}

/** A guard transaction ticket's statements and what its measured run changed: the bounds its retry must stay within. */
export interface GuardTransactionRecord {
  statements: GuardTransactionStatement[];
  /** Rows per table the client's measured run changed, measured once at its COMMIT. */
  effects: MeasuredTableEffect[];
  /**
   * Which rows that existed before it the measured run updated, deleted or locked, by primary key, per table
   * (where it could tell): the retry must touch the same ones. Absent: none captured.
   */
  rows?: TouchedRows[];
}

/** The primary keys (each a JSON array of its columns' values as text) of one table's rows a transaction touched. */
export interface TouchedRows {
  schema: string;
  name: string;
  keys: string[];
}

/** A person's decision as the executor checks it against `approval.policy` (SPEC §5.3). */
export interface TicketDecision {
  by: string;
  approve: boolean;
  /** ISO-8601; part of what is signed. */
  at: string;
  /** The hash of the SQL or plan the person decided on; a decision on another hash is void. */
  hash: string;
  comment?: string;
  /**
   * Ed25519 signature (base64url) by the key `keyName`: over decisionPayload(ticket id, hash, approve, at), or,
   * with a scope, over scopedDecisionPayload (kind, database identity, impact bounds, policy version too).
   */
  signature?: DecisionSignature;
}

/** What a signed-mode signature binds besides the ticket's own fields (SPEC §5 3a). */
export interface DecisionScope {
  /** The database identity key ("system identifier/database") the signer's database reported. */
  database: string;
  /** The pinned policy version the decision was made under (0: none pinned). */
  policyVersion: number;
}

export interface DecisionSignature {
  keyName: string;
  value: string;
  scope?: DecisionScope;
}

/** What a plan ticket is bound to, besides the hash of the plan's text. */
export interface PlanBinding {
  jobId: string;
  /** The review cycle the plan was written in. */
  cycle: number;
  title: string;
}

/**
 * The transaction an execution runs in, recorded on the ticket before its COMMIT (SPEC §5.6), so a ticket
 * left EXECUTING by a dead executor is resolved from pg_xact_status(), never guessed.
 */
export interface TicketExecution {
  /** pg_current_xact_id() of the executing transaction, as text. */
  xid: string;
  by: string;
  startedAt: string;
  /** Where the undo script was written before COMMIT (a path on the executor's machine). */
  undoFile?: string;
}

export interface TicketEvent {
  action: TicketAction;
  /** Who: a person's name for decisions, "pg-agent"/"vscode" for the system. */
  by: string;
  /** ISO-8601. */
  at: string;
  comment?: string;
}

export interface Ticket {
  /** "tkt_" + 20 base32 characters. */
  id: string;
  kind: TicketKind;
  /**
   * A write ticket: the exact SQL that was previewed and is to be approved, byte for byte. A plan ticket:
   * the reviewed plan text (job id, plan.md and todos.yaml of that cycle, see planText()).
   */
  sql: string;
  /**
   * sha256 (hex) of `sql` (of a guard transaction: of its origin, SQL, statements and effects, ticketHash()):
   * what every decision names and every signature covers.
   */
  sqlHash: string;
  /** Which database: a password-free key such as "postgres://app@db:5432/shop" or "sample:/abs/dir". */
  connection: string;
  impact: ImpactReport;
  risk: Risk;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  status: TicketStatus;
  history: TicketEvent[];
  /** Every decision, in order: a second person's approval of an APPROVED ticket is added here. */
  decisions: TicketDecision[];
  /** Set on plan tickets. */
  plan?: PlanBinding;
  /** Set when an execution claims the ticket (its transaction id, recorded before COMMIT). */
  execution?: TicketExecution;
  /** Absent: 'statement' (every ticket stored before origins existed). */
  origin?: TicketOrigin;
  /** Set on 'guardTransaction' tickets only: `sql` is transactionSql() of these statements. */
  transaction?: GuardTransactionRecord;
  /** What `TicketStore.findLive` finds it by when not its `sqlHash` (a lookup aid only: never what is approved). */
  matchKey?: string;
}

export const TICKET_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * The "transaction" of a statement that PostgreSQL runs only outside one (CREATE INDEX CONCURRENTLY, VACUUM,
 * ...): there is no id whose fate can be read, so a ticket left EXECUTING by a crash with it stays EXECUTING,
 * which is the truth as far as anyone can tell from the ticket; the database itself shows what was done.
 */
export const OUTSIDE_TRANSACTION_XID = 'outside-transaction';

export function sqlHash(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

/**
 * The text a plan ticket approves: the job and both files of that review cycle, each delimited so no
 * edit can move text from one file to the other and keep the hash.
 */
export function planText(jobId: string, planMd: string, todosYaml: string): string {
  return `job ${jobId}\n--- plan.md (${Buffer.byteLength(planMd, 'utf8')} bytes)\n${planMd}\n--- todos.yaml (${Buffer.byteLength(todosYaml, 'utf8')} bytes)\n${todosYaml}`;
}

/** The bytes a decision's signature covers: ticket id, hash, decision and time (SPEC §5.3). */
export function decisionPayload(ticketId: string, hash: string, approve: boolean, at: string): Buffer {
  return Buffer.from(JSON.stringify({ ticket: ticketId, hash, decision: approve ? 'approve' : 'reject', at }), 'utf8');
}

/** Whether only a guard client's own retry may commit the ticket (the executor refuses to replay it). */
export function isGuardTransaction(ticket: Pick<Ticket, 'origin'>): boolean {
  return ticket.origin === 'guardTransaction';
}

/** The SQL a guard transaction ticket shows: its statements with their values, in order, one per line. */
export function transactionSql(statements: readonly Pick<GuardTransactionStatement, 'sql'>[]): string {
  return statements.map((s) => `${s.sql.trim().replace(/;\s*$/, '')};`).join('\n');
}

/**
 * What a ticket's decisions name (`sqlHash`): the hash of its SQL; for a guard transaction, of its origin, SQL,
 * statements (each with its template, in order) and effects, so an edit of any of them after a decision, or a
 * ticket passed off as the other origin, voids the decision and its signature (both cover this hash).
 */
export function ticketHash(ticket: Pick<Ticket, 'sql' | 'origin' | 'transaction'>): string {
  if (ticket.origin !== 'guardTransaction') return sqlHash(ticket.sql);
  const t = ticket.transaction;
  const payload = {
    v: 1,
    origin: ticket.origin,
    sql: ticket.sql,
    // What may vary on retry is part of what is approved; a statement without any hashes as it always did.
    statements: (t?.statements ?? []).map((s) =>
      s.varies?.length
        ? [s.sql, s.template, s.read, s.varies.map((v) => [v.at, v.kind, v.value, v.from, v.row, v.column, v.fromAt])]
        : [s.sql, s.template, s.read],
    ),
    effects: (t?.effects ?? []).map((e) => [e.schema, e.name, e.inserted, e.updated, e.deleted]),
    // The rows it touched are approved too; a ticket without them hashes as it always did.
    ...(t?.rows?.length ? { rows: t.rows.map((r) => [r.schema, r.name, r.keys]) } : {}),
  };
  return sqlHash(JSON.stringify(payload));
}

/** The ticket's content is what its hash names, and a guard transaction's SQL is its statements'. */
export function contentMatchesHash(ticket: Pick<Ticket, 'sql' | 'sqlHash' | 'origin' | 'transaction'>): boolean {
  if (ticketHash(ticket) !== ticket.sqlHash) return false;
  if (ticket.origin === 'guardTransaction')
    return (
      ticket.transaction !== undefined &&
      ticket.transaction.statements.length > 0 &&
      ticket.sql === transactionSql(ticket.transaction.statements)
    );
  return ticket.transaction === undefined;
}
