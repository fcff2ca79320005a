/**
 * The retry of an approved guard transaction against the approved ticket, value by value, at its COMMIT: each
 * statement must have the approved text with its constants as `$n` (normalized) and the approved constants, in
 * order, except where the ticket says a value varies on retry (varyingValues.ts), and there only as it says.
 * What differs is listed (statement, position, approved value → new value, why): the held-again card shows it.
 */
import type { GuardTransactionStatement, GuardVaryingValue } from '../../core/approvals/ticket';
import type { ReturnedRows } from './resultCapture';
import type { StatementValues } from './statementValues';
import { statementValues } from './statementValues';
import type { VaryingRule } from './varyingValues';
import { isCurrentTimestamp, isUuidV4, predicateValues } from './varyingValues';

export interface ValueDifference {
  /** 0-based statement index. */
  statement: number;
  /** 0-based position among its constants; absent: the statement's text differs besides its constants. */
  at?: number;
  approved: string;
  now: string;
  why: string;
}

/** The retry's statements: their text and, parsed once, their values. */
export interface RetryStatement {
  sql: string;
  values: () => StatementValues;
}

const shown = (value: string | null): string =>
  value === null ? 'NULL' : value.length > 80 ? `${value.slice(0, 77)}…` : value;

/** Empty when the retry is the approved transaction (the parser must be loaded). */
export function compareValues(
  approved: readonly GuardTransactionStatement[],
  retry: readonly RetryStatement[],
  returned: ReadonlyMap<number, ReturnedRows>,
  rule: VaryingRule,
): ValueDifference[] {
  const differences: ValueDifference[] = [];
  if (approved.length !== retry.length) {
    differences.push({
      statement: Math.min(approved.length, retry.length),
      approved: `${approved.length} statements`,
      now: `${retry.length} statements`,
      why: 'another number of statements',
    });
    return differences;
  }
  let retryPredicates: Set<string> | undefined;
  const retryValues: StatementValues[] = [];
  const valuesAt = (k: number): StatementValues => (retryValues[k] ??= retry[k]!.values());
  for (const [k, ticket] of approved.entries()) {
    const now = retry[k]!;
    const varies = ticket.varies ?? [];
    if (ticket.sql === now.sql && !varies.some((v) => v.kind === 'returned' || v.kind === 'same')) continue;
    const theirs = statementValues(ticket.sql);
    const ours = valuesAt(k);
    if (theirs.normalized !== ours.normalized || theirs.sites.length !== ours.sites.length) {
      differences.push({ statement: k, approved: shown(ticket.sql), now: shown(now.sql), why: 'another statement' });
      continue;
    }
    const byPosition = new Map(varies.map((v) => [v.at, v]));
    for (const [at, site] of theirs.sites.entries()) {
      const value = ours.sites[at]!.value;
      const vary = byPosition.get(at);
      const problem = vary
        ? varyProblem(vary, value, { returned, rule, valuesAt, predicates: () => (retryPredicates ??= predicates()) })
        : value === site.value
          ? undefined
          : 'must be identical';
      if (problem) differences.push({ statement: k, at, approved: shown(site.value), now: shown(value), why: problem });
    }
  }
  return differences;

  function predicates(): Set<string> {
    return predicateValues(retry.map((_, k) => valuesAt(k)));
  }
}

interface RetryFacts {
  returned: ReadonlyMap<number, ReturnedRows>;
  rule: VaryingRule;
  valuesAt: (statement: number) => StatementValues;
  predicates: () => Set<string>;
}

/** Why the retry's value at a varying place is not what the ticket allows there; undefined when it is. */
function varyProblem(vary: GuardVaryingValue, value: string | null, facts: RetryFacts): string | undefined {
  switch (vary.kind) {
    case 'returned': {
      const rows = facts.returned.get(vary.from ?? -1);
      const column = rows?.columns.indexOf(vary.column ?? '') ?? -1;
      const source = column >= 0 ? rows?.rows[vary.row ?? 0]?.[column] : undefined;
      if (source !== undefined && source !== null && value === source) return undefined;
      return `must be what statement ${(vary.from ?? 0) + 1} returned in this run (${source === undefined || source === null ? 'nothing' : source})`;
    }
    case 'same': {
      const first = facts.valuesAt(vary.from ?? 0).sites[vary.fromAt ?? 0]?.value;
      return value === first
        ? undefined
        : `must be the value of statement ${(vary.from ?? 0) + 1}, value ${(vary.fromAt ?? 0) + 1} (${shown(first ?? null)})`;
    }
    case 'uuid':
      if (value === vary.value) return undefined;
      if (!facts.rule.volatile) return 'must be identical (varying values are turned off)';
      if (value === null || !isUuidV4(value)) return 'must be a random UUID (version 4)';
      return facts.predicates().has(value) ? 'must be a fresh UUID (this one chooses rows in the retry)' : undefined;
    case 'timestamp':
      if (value === vary.value) return undefined;
      if (!facts.rule.volatile) return 'must be identical (varying values are turned off)';
      return value !== null && isCurrentTimestamp(value, facts.rule.now, vary.value)
        ? undefined
        : "must be the current time (within 10 minutes of the guard's clock, written as before)";
  }
}

/** What differs, one line each, for the held-again card and the client's error. */
export function differenceLines(differences: readonly ValueDifference[]): string[] {
  return differences.map((d) =>
    d.at === undefined
      ? `statement ${d.statement + 1}: ${d.why}: approved "${d.approved}", now "${d.now}"`
      : `statement ${d.statement + 1}, value ${d.at + 1}: approved ${d.approved} → now ${d.now} (${d.why})`,
  );
}
