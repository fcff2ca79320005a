/**
 * Lint of schema changes, in the spirit of squawk's rules and Bytebase's SQL review (names follow squawk's
 * where one exists): each finding says what goes wrong on a live table, what to do, and where one exists a
 * safer statement the person can pick instead (`saferSql`, checked to parse as the intended statement).
 */
import { quoteIdent } from '../../../shared/sqlNames';
import { parseSql } from '../parse';
import { rec } from '../parseTree';
import type { DdlChange, LockWork, PlannedLock } from './ddlPlan';
import { blocksOf } from './lockModes';

export interface LintFinding {
  rule: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  /** What to do instead, in a sentence or two (beyond SPEC §6's shape, additive). */
  advice: string;
  saferSql?: string;
}

export interface LintInput {
  sql: string;
  kind: string;
  changes: readonly DdlChange[];
  locks: readonly (PlannedLock & { work: LockWork })[];
  /** Tables that are not empty (rows > 0 or unknown): most rules matter only for tables in use. */
  inUse: (table: string) => boolean;
  /** Tables above the policy's small size: waiting for a lock on them is worth a word. */
  notSmall: (table: string) => boolean;
  /** Volatile-default columns, from the catalog step. */
  rewrites: boolean;
  /** Whether SET NOT NULL on table.column is already proven by a validated CHECK. */
  notNullProven: (table: string, column: string) => boolean;
  lockTimeoutMs: number;
}

export function lintStatement(input: LintInput): LintFinding[] {
  const findings: LintFinding[] = [];
  const { sql, changes } = input;
  const single = changes.length === 1;
  for (const change of changes) {
    switch (change.kind) {
      case 'createIndex':
        if (!change.concurrent && input.inUse(change.table)) {
          findings.push({
            rule: 'require-concurrent-index-creation',
            severity: 'warning',
            message: `CREATE INDEX blocks every write to ${change.table} while the index is built.`,
            advice:
              'Build it with CREATE INDEX CONCURRENTLY: writes go on; it runs outside a transaction and, if it fails, leaves an INVALID index to drop.',
            ...safer(
              sql.replace(/^(CREATE\s+(?:UNIQUE\s+)?INDEX)\b/i, '$1 CONCURRENTLY'),
              'IndexStmt',
              (n) => n.concurrent === true,
            ),
          });
        }
        break;
      case 'drop':
        if (change.objectType === 'OBJECT_INDEX' && !change.concurrent) {
          findings.push({
            rule: 'require-concurrent-index-deletion',
            severity: 'warning',
            message:
              'DROP INDEX takes ACCESS EXCLUSIVE on the table: reads and writes wait, and so does everything queued behind it.',
            advice:
              'Use DROP INDEX CONCURRENTLY (one index, no CASCADE): it waits for running queries instead of blocking new ones.',
            ...(change.objects.length === 1 && !change.cascade
              ? safer(sql.replace(/^(DROP\s+INDEX)\b/i, '$1 CONCURRENTLY'), 'DropStmt', (n) => n.concurrent === true)
              : {}),
          });
        } else if (change.objectType === 'OBJECT_TABLE') {
          findings.push({
            rule: 'ban-drop-table',
            severity: 'error',
            message: `DROP TABLE deletes ${change.objects.join(', ')} and every row in it; no rollback after commit.`,
            advice: 'Make sure no client still uses it (rename it first and wait, or revoke access), and keep a dump.',
          });
        }
        break;
      case 'dropColumn':
        findings.push({
          rule: 'ban-drop-column',
          severity: 'warning',
          message: `Dropping ${change.table}.${change.column} breaks every client that still selects or writes it.`,
          advice: 'Stop using the column in the application first, deploy, then drop it.',
        });
        break;
      case 'addCheck':
        if (!change.notValid && input.inUse(change.table)) {
          const name = change.name ?? defaultName(change.table, 'check');
          findings.push({
            rule: 'constraint-missing-not-valid',
            severity: 'warning',
            message: `ADD CONSTRAINT … CHECK scans all of ${change.table} under ACCESS EXCLUSIVE: reads and writes wait for the scan.`,
            advice: `Add it NOT VALID (instant), then in a separate statement ALTER TABLE ${change.table} VALIDATE CONSTRAINT ${name}, which scans under SHARE UPDATE EXCLUSIVE (reads and writes go on).`,
            ...(single ? safer(notValidSql(sql, name, change.name === null), 'AlterTableStmt', notValidCheck) : {}),
          });
        }
        break;
      case 'addForeignKey':
        if (!change.notValid && input.inUse(change.table)) {
          const name = change.name ?? defaultName(change.table, `${change.columns.join('_')}_fkey`);
          findings.push({
            rule: 'constraint-missing-not-valid',
            severity: 'warning',
            message: `ADD FOREIGN KEY checks every row of ${change.table} while writes to ${change.table} and ${change.refTable} wait (SHARE ROW EXCLUSIVE).`,
            advice: `Add it NOT VALID (instant), then in a separate statement ALTER TABLE ${change.table} VALIDATE CONSTRAINT ${name} (writes go on).`,
            ...(single ? safer(notValidSql(sql, name, change.name === null), 'AlterTableStmt', notValidCheck) : {}),
          });
        }
        break;
      case 'addUnique':
        if (!change.usingIndex && input.inUse(change.table)) {
          const index = change.name ?? defaultName(change.table, `${change.columns.join('_')}_key`);
          findings.push({
            rule: 'disallowed-unique-constraint',
            severity: 'warning',
            message: `ADD ${change.primary ? 'PRIMARY KEY' : 'UNIQUE'} builds an index under ACCESS EXCLUSIVE: reads and writes of ${change.table} wait.`,
            advice: `Build the index first with CREATE UNIQUE INDEX CONCURRENTLY ${index} …, then ALTER TABLE ${change.table} ADD CONSTRAINT ${index} ${change.primary ? 'PRIMARY KEY' : 'UNIQUE'} USING INDEX ${index} (instant).`,
            ...(change.columns.length > 0
              ? safer(
                  `CREATE UNIQUE INDEX CONCURRENTLY ${quoteIdent(index)} ON ${change.table} (${change.columns.map(quoteIdent).join(', ')})`,
                  'IndexStmt',
                  (n) => n.concurrent === true,
                )
              : {}),
          });
        }
        break;
      case 'addColumn':
        if (input.rewrites && change.defaultSql !== null && input.inUse(change.table)) {
          findings.push({
            rule: 'adding-field-with-default',
            severity: 'error',
            message: `The default ${change.defaultSql} is volatile: ${change.table} is rewritten under ACCESS EXCLUSIVE (reads and writes wait for the whole rewrite).`,
            advice: `Add the column without a default, then SET DEFAULT for new rows, and fill old rows in small batches (UPDATE … WHERE id BETWEEN …).`,
            ...(single
              ? safer(
                  `ALTER TABLE ${change.table} ADD COLUMN ${quoteIdent(change.column)} ${change.type}`,
                  'AlterTableStmt',
                )
              : {}),
          });
        } else if (
          change.notNull &&
          change.defaultSql === null &&
          !change.generated &&
          !change.identity &&
          input.inUse(change.table)
        ) {
          findings.push({
            rule: 'adding-required-field',
            severity: 'error',
            message: `A NOT NULL column without a default cannot be added to ${change.table}, which has rows.`,
            advice:
              'Add it with a constant DEFAULT (no rewrite since PostgreSQL 11), or nullable and fill it before SET NOT NULL.',
          });
        }
        break;
      case 'setNotNull':
        if (!input.notNullProven(change.table, change.column) && input.inUse(change.table)) {
          const name = defaultName(change.table, `${change.column}_not_null`);
          findings.push({
            rule: 'adding-not-nullable-field',
            severity: 'warning',
            message: `SET NOT NULL scans all of ${change.table} under ACCESS EXCLUSIVE: reads and writes wait for the scan.`,
            advice: `First ADD CONSTRAINT ${name} CHECK (${change.column} IS NOT NULL) NOT VALID, then VALIDATE CONSTRAINT ${name} (no blocking), then SET NOT NULL (instant: the check proves it), then drop the check.`,
            saferSql: `ALTER TABLE ${change.table} ADD CONSTRAINT ${quoteIdent(name)} CHECK (${quoteIdent(change.column)} IS NOT NULL) NOT VALID`,
          });
        }
        break;
      case 'alterType':
        if (input.inUse(change.table)) {
          const rewrite = input.locks.some((l) => l.work === 'rewrite');
          findings.push({
            rule: 'changing-column-type',
            severity: rewrite ? 'error' : 'info',
            message: rewrite
              ? `Changing the type of ${change.table}.${change.column} rewrites the table and its indexes under ACCESS EXCLUSIVE.`
              : `Changing the type of ${change.table}.${change.column} is catalog-only here, but clients may read the column differently.`,
            advice: 'On a big table: add a new column, fill it in batches, switch the clients, then drop the old one.',
          });
        }
        break;
      case 'rename':
        findings.push({
          rule: change.column === null ? 'renaming-table' : 'renaming-column',
          severity: 'warning',
          message: `Renaming ${change.column === null ? `table ${change.table}` : `${change.table}.${change.column}`} breaks every client and function that uses the old name.`,
          advice:
            change.column === null
              ? 'Rename, then create a view with the old name for the clients that have not moved yet.'
              : 'Add the new column, write both, move the clients, then drop the old one.',
        });
        break;
      case 'reindex':
        if (!change.concurrent) {
          findings.push({
            rule: 'require-concurrent-reindex',
            severity: 'warning',
            message: 'REINDEX blocks writes to the table and queries that use the index while it rebuilds.',
            advice:
              'Use REINDEX … CONCURRENTLY (PostgreSQL 12+): it builds a new index beside the old one and swaps them.',
            ...safer(sql.replace(/^(REINDEX\s+(?:INDEX|TABLE))\s+/i, '$1 CONCURRENTLY '), 'ReindexStmt', (n) =>
              JSON.stringify(n.params ?? []).includes('concurrently'),
            ),
          });
        }
        break;
      case 'vacuum':
        if (change.full) {
          findings.push({
            rule: 'ban-vacuum-full',
            severity: 'error',
            message: `VACUUM FULL rewrites ${change.tables.join(', ') || 'every table'} under ACCESS EXCLUSIVE: reads and writes wait for the whole rewrite.`,
            advice:
              'A plain VACUUM (no lock on reads or writes) frees space for reuse; to give space back to the OS online, use pg_repack or pg_squeeze.',
          });
        }
        break;
      case 'cluster':
        findings.push({
          rule: 'ban-cluster',
          severity: 'error',
          message: `CLUSTER rewrites ${change.table} under ACCESS EXCLUSIVE: reads and writes wait for the whole rewrite.`,
          advice: 'Use pg_repack --order-by to reorder online, or accept the outage in a maintenance window.',
        });
        break;
      case 'truncate':
        if (change.cascade) {
          findings.push({
            rule: 'ban-truncate-cascade',
            severity: 'error',
            message: `TRUNCATE … CASCADE also empties every table that references ${change.tables.join(', ')}, and theirs, whatever they are.`,
            advice: 'Truncate the referencing tables by name, so the statement says everything it empties.',
            ...safer(sql.replace(/\s+CASCADE\s*$/i, ''), 'TruncateStmt', (n) => n.behavior !== 'DROP_CASCADE'),
          });
        }
        break;
      default:
        break;
    }
  }
  const waiting = input.locks.filter((l) => blocksOf(l.mode) !== 'nothing');
  if (waiting.length > 0 && input.lockTimeoutMs > 1000 && waiting.some((l) => input.notSmall(l.relation))) {
    findings.push({
      rule: 'require-timeout-settings',
      severity: 'info',
      message: `It will wait up to ${input.lockTimeoutMs} ms for its ${waiting[0]?.mode} lock; while it waits, every later query on ${waiting[0]?.relation} queues behind it.`,
      advice: 'Run it when the table is quiet, or lower safety.lockTimeoutMs (e.g. 2000) and retry if it times out.',
    });
  }
  return findings;
}

/** `saferSql` only when the rewritten text still parses as the intended statement (never a guess). */
function safer(
  candidate: string,
  kind: string,
  holds: (node: Record<string, unknown>) => boolean = () => true,
): { saferSql?: string } {
  try {
    const parsed = parseSql(candidate).statements;
    const first = parsed[0];
    if (parsed.length !== 1 || !first || first.kind !== kind) return {};
    return holds(rec(first.tree, kind) ?? {}) ? { saferSql: candidate } : {};
  } catch {
    // A rewrite that does not parse is not offered; the advice still says what to do.
    return {};
  }
}

function notValidSql(sql: string, name: string, unnamed: boolean): string {
  const named = unnamed
    ? sql.replace(
        /\bADD\s+(CHECK|FOREIGN\s+KEY)\b/i,
        (_m, what: string) => `ADD CONSTRAINT ${quoteIdent(name)} ${what}`,
      )
    : sql;
  return `${named.replace(/;\s*$/, '')} NOT VALID`;
}

function notValidCheck(n: Record<string, unknown>): boolean {
  return JSON.stringify(n).includes('"skip_validation":true');
}

/** PostgreSQL's naming of an unnamed constraint: table_suffix (truncation to 63 bytes ignored). */
function defaultName(table: string, suffix: string): string {
  return `${table.split('.').pop() ?? table}_${suffix}`;
}

/** Lint findings in a line each, for the model that wrote the SQL (a job's held write): what, and the safer form. */
export function lintForModel(findings: readonly LintFinding[]): string {
  return findings
    .filter((f) => f.severity !== 'info')
    .map((f) => `\nLint ${f.rule}: ${f.message}${f.saferSql ? ` Safer: ${f.saferSql}` : ` ${f.advice}`}`)
    .join('');
}
