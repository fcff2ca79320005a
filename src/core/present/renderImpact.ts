/** Impact reports and read results as a person reads them in a terminal. */
import type { ImpactReport } from '../../shared/impactReport';
import { describeLock, describeLockHolder } from '../../shared/lockPhrases';
import { describeReach, reachToShow } from '../../shared/reachPhrases';
import type { ReadResult } from '../sql/runRead';
import type { JsonValue } from '../db/valueEncoding';
import { visibleText } from '../../shared/visibleSql';
import { columns, formatCount } from './format';
import { restoredRows } from '../sql/recovery/restorePlan';

const BAR_WIDTH = 24;

export function renderImpact(impact: ImpactReport): string {
  const previewed =
    (impact as Partial<ImpactReport>).previewed !== false
      ? `preview ${formatCount(impact.previewMs)} ms`
      : `not previewed (analysed in ${formatCount(impact.previewMs)} ms)`;
  // An undo of a DROP TABLE moves the table back whole: its rows are not among those changed, but they come back.
  const restored = restoredRows((impact as Partial<ImpactReport>).restores ?? []);
  const restores = restored ? ` · restores ${restored.exact ? '' : '≈ '}${formatCount(restored.rows)} rows` : '';
  const lines = [
    `Impact · risk ${impact.risk} · estimate ${impact.estimatedRows === null ? 'n/a' : formatCount(impact.estimatedRows)} · exact ${impact.exactRows === null ? 'n/a' : formatCount(impact.exactRows)} rows${restores} · ${previewed}`,
  ];
  if ((impact as Partial<ImpactReport>).transactional === false)
    lines.push('  CANNOT BE ROLLED BACK: runs outside a transaction, alone, once approved');
  lines.push(...renderDdl(impact));
  const locks = (impact as Partial<ImpactReport>).locks ?? [];
  const ddlOnly = locks.length > 0 && locks.every((l) => l.mode !== 'ROW EXCLUSIVE');
  for (const r of (impact as Partial<ImpactReport>).restores ?? []) lines.push(`  ${r.summary}`);
  if (impact.tables.length > 0) {
    const max = Math.max(...impact.tables.map((t) => t.inserted + t.updated + t.deleted), 1);
    lines.push(
      columns(
        impact.tables.map((t) => {
          const total = t.inserted + t.updated + t.deleted;
          const what = [
            t.deleted ? `${formatCount(t.deleted)} deleted` : '',
            t.updated ? `${formatCount(t.updated)} updated` : '',
            t.inserted ? `${formatCount(t.inserted)} inserted` : '',
          ].filter(Boolean);
          const bar = '█'.repeat(Math.max(1, Math.round((total / max) * BAR_WIDTH)));
          return [`${t.schema}.${t.name}`, `(${t.via})`, bar, what.join(', ')];
        }),
        '  ',
      ),
    );
  } else if (!impact.wouldFail && !ddlOnly && !restored) {
    lines.push('  no rows change');
  }
  for (const fk of impact.foreignKeyActions)
    lines.push(`  foreign key ${fk.constraint}: ${fk.action} from ${fk.references} to ${fk.table}`);
  for (const t of impact.triggers) lines.push(`  trigger ${t.name} fires on ${t.table}`);
  lines.push(...renderReach(impact));
  if (impact.wouldFail) lines.push(`  WOULD FAIL: ${impact.wouldFail.message} (SQLSTATE ${impact.wouldFail.code})`);
  // "Cannot be rolled back" has its own line at the top.
  for (const w of impact.warnings.filter((x) => !x.startsWith('Cannot be rolled back'))) lines.push(`  ! ${w}`);
  // Names, messages and safer SQL come from the database and the statement: shown, never obeyed by the terminal.
  return visibleText(lines.join('\n'));
}

/** The database's own code the statements run (SPEC §5 1a): what does something, then a count of the rest. */
function renderReach(report: ImpactReport): string[] {
  // Impacts stored before reach existed (tickets, job checkpoints) have none.
  const { shown, safeLeftOut } = reachToShow((report as Partial<ImpactReport>).reach ?? []);
  const lines = shown.map(
    (entry) =>
      `  ${entry.verdict === 'safe' ? 'runs' : entry.verdict === 'unknown' ? 'RUNS UNKNOWN CODE' : 'RUNS'}: ${describeReach(entry)}`,
  );
  if (safeLeftOut > 0)
    lines.push(`  runs ${safeLeftOut} more function${safeLeftOut === 1 ? '' : 's'} that only compute`);
  return lines;
}

/** Locks, rewrites, dependents and lint of DDL and maintenance (SPEC §5.4a). */
function renderDdl(report: ImpactReport): string[] {
  // Impacts stored before these fields existed (job checkpoints) have none of them.
  const stored: Partial<ImpactReport> = report;
  const impact = {
    locks: stored.locks ?? [],
    rewrites: stored.rewrites ?? [],
    dependents: stored.dependents ?? [],
    lint: stored.lint ?? [],
    previewed: stored.previewed !== false,
  };
  const lines: string[] = [];
  // Plain data changes take ROW EXCLUSIVE, which blocks no reads or writes: not worth a line each.
  for (const lock of impact.locks.filter((l) => l.mode !== 'ROW EXCLUSIVE' || l.waitsBehind > 0)) {
    lines.push(
      `  lock: ${describeLock(lock)}${lock.waitsBehind > 0 ? ` · waits behind ${lock.waitsBehind} session${lock.waitsBehind === 1 ? '' : 's'}` : ''}`,
    );
  }
  // Issue 25: who held or awaited a conflicting lock when the impact was computed (the executor checks again).
  for (const holder of stored.lockHolders ?? []) lines.push(`  in the way: ${describeLockHolder(holder)}`);
  // The summary starts with "Way back:" or "No way back:"; the latter in capitals, like other points of no return.
  for (const way of stored.recovery ?? [])
    lines.push(`  ${way.way === 'none' ? way.summary.replace(/^No way back:/, 'NO WAY BACK:') : way.summary}`);
  if (impact.rewrites.length > 0)
    lines.push(
      `  rewrites: ${impact.rewrites.join(', ')}${impact.previewed ? ' (seen by the preview)' : ' (predicted)'}`,
    );
  for (const d of impact.dependents) lines.push(`  depends: ${d.kind} ${d.name} — ${d.effect}`);
  for (const l of impact.lint) {
    lines.push(`  lint ${l.severity} ${l.rule}: ${l.message}`);
    lines.push(`       ${l.advice}`);
    if (l.saferSql) lines.push(`       safer: ${l.saferSql}`);
  }
  return lines;
}

const MAX_CELL = 60;

export function renderRows(result: ReadResult): string {
  const cell = (v: JsonValue): string => {
    const text = v === null ? 'NULL' : typeof v === 'string' ? v : JSON.stringify(v);
    // Values are the database's: hidden characters shown, not obeyed by the terminal.
    const oneLine = visibleText(text).replace(/[ \t\r\n]+/g, ' ');
    return oneLine.length > MAX_CELL ? `${oneLine.slice(0, MAX_CELL - 1)}…` : oneLine;
  };
  const header = result.fields.map((f) => visibleText(f.name));
  const body = result.rows.map((row) => row.map(cell));
  const table =
    result.fields.length > 0 ? columns([header, header.map((h) => '-'.repeat(Math.max(h.length, 3))), ...body]) : '';
  const footer = `(${formatCount(result.rowCount)} row${result.rowCount === 1 ? '' : 's'}${result.truncated ? `, truncated at the row cap; use --max-rows to see more` : ''}; ${formatCount(result.elapsedMs)} ms)`;
  return table ? `${table}\n${footer}` : footer;
}

/** The input with a caret under the 0-based position (the line of the error only). */
export function caretAt(input: string, position: number): string {
  const lineStart = input.lastIndexOf('\n', Math.max(0, position - 1)) + 1;
  const lineEnd = input.indexOf('\n', position);
  const line = input.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
  // The caret counts what is drawn: stand-ins for hidden characters, one column per code point.
  const before = [...visibleText(input.slice(lineStart, Math.max(lineStart, position)))].length;
  return `  ${visibleText(line)}\n  ${' '.repeat(before)}^`;
}
