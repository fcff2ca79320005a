/**
 * The guard's typed answers (`pg-agent guard`): what a client that is ours (`pg-agent mcp --guard`) reads from a
 * statement the guard did not pass, as fields, never out of the message a person reads. PA001 (held) carries the
 * ticket id, its risk and whether it was an earlier ticket still waiting; PA002 (refused) says so. The fields travel
 * as the last line of the ErrorResponse's detail (the only free field every PostgreSQL client hands on), one line of
 * JSON after a fixed prefix: psql shows it, a driver passes it on, and this file alone writes and reads it.
 */
import { TICKET_ID_PATTERN } from './ids';
import type { Risk } from './impactReport';

/** PA001: held for approval on `ticket`. */
export interface GuardHeldFields {
  kind: 'held';
  ticket: string;
  risk: Risk;
  /** An identical statement's ticket that is still waiting (nothing new was measured). */
  reused: boolean;
  /** `--hold wait` gave up after this long. */
  waitedSeconds?: number;
}

/** PA002: refused (nothing ran, and no approval makes it run). */
export interface GuardRefusedFields {
  kind: 'refused';
}

export type GuardFields = GuardHeldFields | GuardRefusedFields;

const PREFIX = 'pg-agent fields: ';
const RISKS: readonly string[] = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

/** The detail line that carries `fields`. */
export function guardFieldsLine(fields: GuardFields): string {
  return `${PREFIX}${JSON.stringify(fields)}`;
}

/** `detail` with the fields' line last. */
export function withGuardFields(detail: string | undefined, fields: GuardFields): string {
  return detail ? `${detail}\n${guardFieldsLine(fields)}` : guardFieldsLine(fields);
}

/** The fields of a guard's answer, from its detail; undefined when there are none or they are malformed. */
export function readGuardFields(detail: string | undefined): GuardFields | undefined {
  const line = detail?.split('\n').at(-1);
  if (!line?.startsWith(PREFIX)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line.slice(PREFIX.length));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.kind === 'refused') return { kind: 'refused' };
  if (v.kind !== 'held') return undefined;
  if (typeof v.ticket !== 'string' || !TICKET_ID_PATTERN.test(v.ticket)) return undefined;
  if (typeof v.risk !== 'string' || !RISKS.includes(v.risk) || typeof v.reused !== 'boolean') return undefined;
  const waited = typeof v.waitedSeconds === 'number' ? { waitedSeconds: v.waitedSeconds } : {};
  return { kind: 'held', ticket: v.ticket, risk: v.risk as Risk, reused: v.reused, ...waited };
}

/** The detail a person reads: without the fields' line. */
export function detailForPeople(detail: string | undefined): string | undefined {
  const lines = detail?.split('\n') ?? [];
  if (lines.at(-1)?.startsWith(PREFIX)) lines.pop();
  return lines.length > 0 ? lines.join('\n') : undefined;
}
