/**
 * The terminal's approval question: y/N, or typing "yes" for a HIGH or CRITICAL write (it names rows and
 * tables) and for a statement holding hidden characters (it says so: a reflexive "y" must not approve it).
 */
import type { ImpactReport } from '../shared/impactReport';
import type { HiddenCharacter } from '../shared/visibleSql';
import { formatCount } from '../core/present/format';

export async function promptApproval(
  prompt: (question: string) => Promise<string>,
  impact: ImpactReport,
  hidden: readonly HiddenCharacter[] = [],
): Promise<boolean> {
  const serious = impact.risk === 'HIGH' || impact.risk === 'CRITICAL';
  const flagged = hidden.length > 0;
  const rows = impact.exactRows ?? impact.estimatedRows ?? 0;
  const questions: string[] = [];
  if (flagged) {
    const shownAs = [...new Set(hidden.map((h) => h.shownAs))].join(' ');
    questions.push(
      `This statement holds ${hidden.length} hidden character${hidden.length === 1 ? '' : 's'} (shown above as ${shownAs}).`,
    );
  }
  if (serious)
    questions.push(`This ${impact.risk} write changes ${formatCount(rows)} rows in ${impact.tables.length} table(s).`);
  const answer = (
    await prompt(
      serious || flagged ? `${questions.join(' ')} Type "yes" to approve and run: ` : 'Approve and run? [y/N] ',
    )
  )
    .trim()
    .toLowerCase();
  return serious || flagged ? answer === 'yes' : answer === 'y' || answer === 'yes';
}
