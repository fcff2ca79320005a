/** The terminal's approval question: y/N, or typing "yes" for a HIGH or CRITICAL write (it names rows and tables). */
import type { ImpactReport } from '../core/sql/impactReport';
import { formatCount } from './format';

export async function promptApproval(prompt: (question: string) => Promise<string>, impact: ImpactReport): Promise<boolean> {
  const serious = impact.risk === 'HIGH' || impact.risk === 'CRITICAL';
  const rows = impact.exactRows ?? impact.estimatedRows ?? 0;
  const answer = (
    await prompt(
      serious
        ? `This ${impact.risk} write changes ${formatCount(rows)} rows in ${impact.tables.length} table(s). Type "yes" to approve and run: `
        : 'Approve and run? [y/N] ',
    )
  )
    .trim()
    .toLowerCase();
  return serious ? answer === 'yes' : answer === 'y' || answer === 'yes';
}
