/** `pg-agent health` as text: a summary line, then each check with its findings, evidence and fix (CLI and MCP both). */
import type { CheckResult, EvidenceValue, Finding, HealthReport } from '../dba/healthTypes';
import { visibleText } from '../../shared/visibleSql';
import { plural } from './format';

const MARK: Record<CheckResult['status'], string> = { ok: '✓', findings: '!', skipped: '–', error: '✗' };

export function renderHealth(report: HealthReport): string {
  const s = report.summary;
  const header =
    `Health of ${visibleText(report.database)} (PostgreSQL ${report.serverVersion}): ${plural(report.checks.length, 'check')} · ` +
    `${s.ok} ok, ${s.findings} with findings, ${s.skipped} skipped, ${s.error} failed · ` +
    `${severityCounts(s)} · ${plural(report.queries, 'catalog read')} in ${report.elapsedMs} ms`;
  return [header, ...report.checks.map(renderCheck)].join('\n\n');
}

/**
 * The findings by severity, as the header of the CLI and the VS Code view say them: "at least" when a check
 * counted offenders it did not list (their severity was not read).
 */
export function severityCounts(s: HealthReport['summary']): string {
  const listed = `${s.critical} critical, ${plural(s.warning, 'warning')}, ${s.info} info`;
  return s.unlisted > 0 ? `at least ${listed} (${s.unlisted} more not listed)` : listed;
}

function renderCheck(check: CheckResult): string {
  const title = `${MARK[check.status]} ${check.title}`;
  const lines = [
    check.status === 'skipped'
      ? `${title}: could not run: ${visibleText(check.note ?? '')}`
      : check.status === 'error'
        ? `${title}: failed: ${visibleText(check.note ?? '')}`
        : title,
  ];
  if (check.note && (check.status === 'ok' || check.status === 'findings'))
    lines.push(`  note: ${visibleText(check.note)}`);
  for (const finding of check.findings) lines.push(...renderFinding(finding));
  if (check.more)
    lines.push(
      `  … and ${check.more} more (the worst ${check.findings.length} are listed; pg-agent health --limit N lists more)`,
    );
  return lines.join('\n');
}

export function renderFinding(finding: Finding): string[] {
  const lines = [`  ${finding.severity.toUpperCase()} ${visibleText(finding.message)}`];
  lines.push(
    `    evidence: ${Object.entries(finding.evidence)
      .map(([k, v]) => `${k}=${evidenceText(v)}`)
      .join(' ')}`,
  );
  if (finding.fixSql) lines.push(`    fix (held for approval): ${visibleText(finding.fixSql)}`);
  if (finding.advice) lines.push(`    ${visibleText(finding.advice)}`);
  return lines;
}

function evidenceText(value: EvidenceValue): string {
  if (value === null) return '—';
  const text = visibleText(String(value));
  return /[\s=]/.test(text) ? JSON.stringify(text) : text;
}
