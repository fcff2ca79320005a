/**
 * The planner's cost of a query in the advisor's session (inside its READ ONLY transaction): plain EXPLAIN, or,
 * for a normalized statement with $n placeholders, the generic plan of a PREPAREd statement (plan_cache_mode is
 * force_generic_plan in that transaction), prepared again each time so hypothetical indexes are seen.
 */
import type { DbSession } from '../../db/db';

export interface PlannedCost {
  cost: number;
  /** The plan as JSON text (to see which indexes it uses). */
  plan: string;
}

let counter = 0;

/** Highest $n in a normalized statement (0: none). */
export function placeholderCount(sql: string): number {
  let max = 0;
  for (const match of sql.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(match[1]));
  return max;
}

/** EXPLAIN in a savepoint, so a query that cannot be planned leaves the transaction usable; undefined then. */
export async function planCost(session: DbSession, sql: string, params: number): Promise<PlannedCost | undefined> {
  await session.query('SAVEPOINT pgagent_advice_plan');
  const name = `pgagent_advice_${process.pid}_${++counter}`;
  let prepared = false;
  try {
    let text: string;
    if (params === 0) {
      text = (await session.queryText(`EXPLAIN (FORMAT JSON) ${sql}`)).rows.map((r) => r[0] ?? '').join('\n');
    } else {
      await session.query(`PREPARE ${name} AS ${sql}`);
      prepared = true;
      text = (
        await session.queryText(
          `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${Array.from({ length: params }, () => 'NULL').join(', ')})`,
        )
      ).rows
        .map((r) => r[0] ?? '')
        .join('\n');
    }
    await session.query('RELEASE SAVEPOINT pgagent_advice_plan');
    const parsed = JSON.parse(text) as { Plan?: { 'Total Cost'?: number } }[];
    const cost = parsed[0]?.Plan?.['Total Cost'];
    return typeof cost === 'number' ? { cost, plan: text } : undefined;
  } catch {
    await session.query('ROLLBACK TO SAVEPOINT pgagent_advice_plan');
    return undefined;
  } finally {
    // A prepared statement outlives a rolled-back savepoint: it is deallocated either way.
    if (prepared) await session.query(`DEALLOCATE ${name}`).catch(() => undefined);
  }
}
