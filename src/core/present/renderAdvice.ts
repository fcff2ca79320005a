/** `pg-agent indexes advise` as text: each recommended index with its measured effect (or "not measured") and its ticket. */
import type { AdviceReport } from '../dba/indexAdvice/adviceTypes';
import { visibleText } from '../../shared/visibleSql';
import { formatCount, plural } from './format';

export function renderAdvice(report: AdviceReport): string {
  const lines: string[] = [];
  lines.push(
    `${plural(report.queries.length, 'query', 'queries')}, ${plural(report.candidates, 'candidate')}, ${report.measured ? `measured with hypopg (${plural(report.explains, 'EXPLAIN')})` : 'NOT MEASURED'} in ${report.elapsedMs} ms`,
  );
  if (report.note) lines.push(report.note);
  for (const q of report.queries) {
    const text = visibleText(q.sql.replace(/\s+/g, ' ').trim()).slice(0, 200);
    if (q.skipped) lines.push(`  [${q.id + 1}] skipped (${visibleText(q.skipped)}): ${text}`);
    else
      lines.push(
        `  [${q.id + 1}] ${q.costBefore !== null && q.costAfter !== null ? `cost ${q.costBefore} → ${q.costAfter}` : 'not measured'}${q.calls > 1 ? ` · ${formatCount(q.calls)} calls` : ''}: ${text}`,
      );
  }
  if (report.recommendations.length === 0) {
    lines.push(
      '',
      report.measured
        ? `No index saves at least ${Math.round(report.minGain * 100)}% of the cost of the queries it would serve, within the budget.`
        : 'No candidate index.',
    );
    return lines.join('\n');
  }
  report.recommendations.forEach((r, i) => {
    lines.push('');
    lines.push(`${i + 1}. ${visibleText(r.sql)}`);
    lines.push(`   why: ${r.reasons.map(visibleText).join('; ')}`);
    if (r.measured) {
      lines.push(
        `   measured: saves ${Math.round((r.gainRatio ?? 0) * 100)}% of the planner cost of the queries it serves · about ${formatBytes(r.estimatedBytes ?? 0)} (hypopg)`,
      );
      for (const b of r.benefits)
        lines.push(
          `     query [${b.query + 1}]: cost ${b.costBefore} → ${b.costAfter}${b.usesIndex ? ' (its plan uses the index)' : ''}`,
        );
    } else {
      lines.push(`   not measured (heuristic score ${r.score})`);
    }
    lines.push(
      `   build: CONCURRENTLY, blocks no reads or writes, cannot run in a transaction; about ${r.buildSecondsEstimate} s for a ${formatBytes(r.tableBytes)} table (estimate)`,
    );
    if (r.ticket)
      lines.push(
        `   held for approval: ticket ${r.ticket.id} (risk ${r.ticket.risk}) · pg-agent approvals approve ${r.ticket.id} && pg-agent exec --ticket ${r.ticket.id}`,
      );
  });
  return lines.join('\n');
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} B`;
}
