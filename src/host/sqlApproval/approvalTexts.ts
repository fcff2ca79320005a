/**
 * The words of the inline approval that tell a person what they approve: the CodeLens titles of a pending
 * write, the modal before "Approve & run", and the warnings on hidden characters (SPEC §5 3a: what a person
 * sees is what runs). Plain data, no `vscode` import, so it is unit-tested; approvalDecorations.ts and
 * heldWriteDecisions.ts wrap it.
 */
import { describeLock } from '../../shared/lockPhrases';
import type { ImpactView } from '../../shared/protocol';
import { hiddenWarning, visibleSql } from '../../shared/visibleSql';

export interface LensSpec {
  title: string;
  command: string;
}

/**
 * The lenses of a pending write: what it does, Approve & run, Reject, Show impact, and what DDL locks. A
 * statement holding hidden characters gets a first lens saying so, and its Approve says it asks once more.
 * `runsHere` false (an outside agent's proposal: the agent runs it): the button only approves and says so.
 */
export function pendingLenses(impact: ImpactView, sql: string, runsHere = true): LensSpec[] {
  const hidden = visibleSql(sql).hidden;
  const rows = impact.exactRows ?? impact.estimatedRows ?? 0;
  const lenses: LensSpec[] = [];
  if (hidden.length > 0)
    lenses.push({
      title: `$(eye) Hidden characters: this statement ${hiddenWarning(hidden, 2)}`,
      command: 'postgresAgent.showImpact',
    });
  lenses.push(
    {
      title: impact.wouldFail
        ? `$(error) Would fail: ${impact.wouldFail.message}`
        : impact.previewed === false && impact.exactRows === null
          ? `$(warning) ${impact.risk} · not previewed${impact.estimatedRows === null ? '' : ` · ~${impact.estimatedRows.toLocaleString('en-US')} rows estimated`}`
          : `$(warning) ${impact.risk} · ${rows.toLocaleString('en-US')} rows in ${impact.tables.length} table${impact.tables.length === 1 ? '' : 's'}`,
      command: 'postgresAgent.showImpact',
    },
    {
      title: `$(check) ${approveLabel(runsHere)}${hidden.length > 0 ? ' (hidden characters: asks again)' : ''}`,
      command: 'postgresAgent.approveTicket',
    },
    { title: '$(x) Reject', command: 'postgresAgent.rejectTicket' },
    { title: 'Show impact', command: 'postgresAgent.showImpact' },
  );
  // Issue 10: a schema change says what it locks (and that it cannot be rolled back) where it is approved.
  // Impacts stored before these fields existed (job checkpoints) have none.
  const stored: Partial<ImpactView> = impact;
  for (const l of (stored.locks ?? []).filter((x) => x.blocks !== 'nothing'))
    lenses.push({ title: `$(lock) ${describeLock(l)}`, command: 'postgresAgent.showImpact' });
  if (stored.transactional === false)
    lenses.push({ title: '$(alert) Cannot be rolled back', command: 'postgresAgent.showImpact' });
  // SPEC §5 1a: the database's own code that does something is named where the statement is approved.
  for (const r of (stored.reach ?? []).filter((x) => x.verdict !== 'safe').slice(0, 3)) {
    lenses.push({
      title: `$(alert) Runs ${r.function}: ${r.effect ?? (r.verdict === 'unknown' ? 'unknown code' : 'a side effect')}`,
      command: 'postgresAgent.showImpact',
    });
  }
  // Lens titles are one line drawn by the editor: names from the database shown, never obeyed.
  return lenses.map((l) => ({ ...l, title: visibleSql(l.title).text }));
}

/** The approve button's words: "Approve & run" where approving runs it, "Approve for the agent" where its proposer runs it. */
export function approveLabel(runsHere: boolean): string {
  return runsHere ? 'Approve & run' : 'Approve for the agent';
}

/**
 * The modal before "Approve & run", or undefined when a click is enough: HIGH and CRITICAL name the rows and
 * tables; a statement holding hidden characters names them. The detail is the statement with every hidden
 * character shown (raw, a bidi override would reorder the modal's text).
 */
export function approvalConfirmation(
  impact: ImpactView,
  sql: string,
  runsHere = true,
): { message: string; detail: string; button: string } | undefined {
  const { text, hidden } = visibleSql(sql);
  const serious = impact.risk === 'HIGH' || impact.risk === 'CRITICAL';
  if (!serious && hidden.length === 0) return undefined;
  const parts: string[] = [];
  if (hidden.length > 0)
    parts.push(`This statement ${hiddenWarning(hidden)}. It runs exactly as shown below, with them.`);
  if (serious) {
    const rows = impact.exactRows ?? impact.estimatedRows ?? 0;
    const tables =
      impact.tables.map((x) => `${x.name} (${x.inserted + x.updated + x.deleted})`).join(', ') || 'no rows measured';
    parts.push(`${impact.risk} risk: this changes ${rows.toLocaleString('en-US')} rows: ${tables}.`);
  }
  return {
    message: visibleSql(
      `${parts.join(' ')} ${runsHere ? 'Run it?' : 'Approve it for the agent that proposed it to run?'}`,
    ).text,
    detail: text,
    button: approveLabel(runsHere),
  };
}

/** A warning for each hidden character of a statement that starts at `start` in its document. */
export function hiddenCharacterMarks(
  sql: string,
  start: number,
): { offset: number; length: number; message: string }[] {
  return visibleSql(sql).hidden.map((h) => ({
    offset: start + h.offset,
    length: h.length,
    message: `Hidden character ${h.name} (shown elsewhere as ${h.shownAs}): the editor may draw it as nothing or reorder the text around it, but it is part of the statement that runs.`,
  }));
}

/** A code block whose fence is longer than any run of backticks inside (the text cannot close it early). */
export function fenced(text: string, language: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}
