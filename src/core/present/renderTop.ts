/** `pg-agent top` as text: the heaviest statements with their numbers, or the setup steps when pg_stat_statements is missing. */
import type { TopReport } from '../dba/topQueries';
import { visibleText } from '../../shared/visibleSql';
import { formatCount } from './format';

export function renderTop(report: TopReport): string {
  if (!report.available) {
    return [
      `pg_stat_statements is not usable in ${visibleText(report.database)}: ${report.reason}`,
      'To set it up:',
      ...report.setup.map((s, i) => `  ${i + 1}. ${s}`),
    ].join('\n');
  }
  if (report.queries.length === 0)
    return `No statements recorded in ${visibleText(report.database)} yet${report.statsSince ? ` (since ${report.statsSince})` : ''}.`;
  const lines = [
    `Heaviest statements in ${visibleText(report.database)} by ${report.by === 'io' ? 'I/O' : report.by === 'total' ? 'total time' : report.by === 'mean' ? 'mean time' : report.by}${report.statsSince ? ` (since ${report.statsSince})` : ''}:`,
  ];
  report.queries.forEach((q, i) => {
    lines.push('');
    lines.push(
      `${i + 1}. ${ms(q.totalMs)} total (${Math.round(q.timeShare * 1000) / 10}%) · ${formatCount(q.calls)} calls · ${ms(q.meanMs)} mean · ${formatCount(q.rows)} rows · ` +
        `${q.hitRatio === null ? 'no blocks' : `${Math.round(q.hitRatio * 1000) / 10}% cache hits`} · ${formatCount(q.sharedBlksRead)} blocks read${q.tempBlksWritten > 0 ? ` · ${formatCount(q.tempBlksWritten)} temp blocks` : ''}${q.user ? ` · ${visibleText(q.user)}` : ''}`,
    );
    lines.push(`   ${visibleText(q.query.replace(/\s+/g, ' ').trim()).slice(0, 400)}`);
  });
  if (report.note) lines.push('', report.note);
  return lines.join('\n');
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(value < 10 ? 2 : 0)} ms`;
}
