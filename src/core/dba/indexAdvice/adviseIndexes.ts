/**
 * `pg-agent indexes advise`: index candidates for the given or the heaviest queries, measured with hypopg's
 * hypothetical indexes when the extension is there (planner cost before and after, which queries benefit,
 * estimated size), chosen greedily within a space budget and above a minimum gain. Without hypopg the candidates
 * are ranked by heuristics and marked "not measured". Every query is checked first like any read (SPEC §5 1, 1a):
 * only a plain SELECT whose reach does nothing is planned. Nothing is built here: the caller submits each
 * recommendation through the one SQL path (runSql), where it is a held write.
 */
import type { Db, DbSession } from '../../db/db';
import { loadParser, parseSql } from '../../sql/parse';
import { checkSql } from '../../sql/reach/checkSql';
import { setLocalTimeouts } from '../../sql/runRead';
import { toAgentError } from '../../platform/errors';
import type { CatalogReader } from '../catalogRead';
import type {
  AdviceOptions,
  AdviceQueryInput,
  AdviceReport,
  AdvisedQuery,
  IndexBenefit,
  IndexRecommendation,
} from './adviceTypes';
import type { IndexCandidate } from './candidates';
import { buildCandidates, createIndexSql } from './candidates';
import type { QueryUsage } from './columnUsage';
import { columnUsage } from './columnUsage';
import { placeholderCount, planCost } from './planCost';

const GIB = 1024 ** 3;
/** Bytes per second a build reads and sorts, for the rough build-time estimate. */
const BUILD_BYTES_PER_SECOND = 50 * 1024 * 1024;

interface Prepared {
  id: number;
  input: AdviceQueryInput;
  params: number;
  usage: QueryUsage[];
}

export async function adviseIndexes(
  db: Db,
  inputs: readonly AdviceQueryInput[],
  options: AdviceOptions = {},
): Promise<AdviceReport> {
  const started = performance.now();
  const budgetBytes = options.budgetBytes ?? GIB;
  const minGain = options.minGain ?? 0.1;
  const maxIndexes = options.maxIndexes ?? 5;
  const limits = {
    statementTimeoutMs: options.statementTimeoutMs ?? 5000,
    lockTimeoutMs: options.lockTimeoutMs ?? 250,
  };
  await loadParser();
  const queries: AdvisedQuery[] = [];
  const prepared: Prepared[] = [];
  for (const [id, input] of inputs.entries()) {
    const entry: AdvisedQuery = {
      id,
      sql: input.sql,
      calls: input.calls,
      source: input.source,
      ...(input.queryid ? { queryid: input.queryid } : {}),
      costBefore: null,
      costAfter: null,
    };
    queries.push(entry);
    const skipped = await whyNotPlanned(db, input.sql);
    if (skipped) {
      entry.skipped = skipped;
      continue;
    }
    const [statement] = parseSql(input.sql).statements;
    const usage = statement ? columnUsage(statement.tree) : [];
    if (usage.length === 0) {
      entry.skipped = 'reads no table an index could serve';
      continue;
    }
    prepared.push({ id, input, params: placeholderCount(input.sql), usage });
  }

  return db.withSession(async (session) => {
    await session.query('BEGIN READ ONLY');
    let hypopgUsed = false;
    try {
      await setLocalTimeouts(session, limits.statementTimeoutMs, limits.lockTimeoutMs);
      await session.query("SET LOCAL plan_cache_mode = 'force_generic_plan'");
      const reader = catalogReaderInTransaction(session);
      const { candidates, queryTables } = await buildCandidates(
        reader,
        prepared.flatMap((p) =>
          p.usage.map((usage) => ({ query: p.id, usage, weight: Math.log10(10 + p.input.calls) })),
        ),
      );
      const tableBytes = await tableSizes(session, [...new Set(candidates.map((c) => c.table))]);
      const hypopg = await hypopgState(session);
      const base = { hypopg, queries, candidates: candidates.length, budgetBytes, minGain } as const;
      if (hypopg !== 'installed') {
        const note =
          hypopg === 'available'
            ? 'Not measured: hypopg is available on this server but not created in this database (CREATE EXTENSION hypopg; as a superuser or the database owner). Candidates are ranked by heuristics.'
            : 'Not measured: the hypopg extension is not installed on this server (Debian/Ubuntu: apt-get install postgresql-NN-hypopg for server major version NN, then CREATE EXTENSION hypopg). Candidates are ranked by heuristics.';
        return {
          ...base,
          measured: false,
          note,
          recommendations: heuristicPicks(candidates, maxIndexes, tableBytes),
          explains: 0,
          elapsedMs: Math.round(performance.now() - started),
        };
      }
      hypopgUsed = true;
      const measured = await measureGreedy(
        session,
        prepared,
        candidates,
        queryTables,
        queries,
        { budgetBytes, minGain, maxIndexes },
        tableBytes,
      );
      return {
        ...base,
        measured: true,
        recommendations: measured.recommendations,
        explains: measured.explains,
        elapsedMs: Math.round(performance.now() - started),
      };
    } finally {
      // Hypothetical indexes live in this backend's memory, not in the transaction: they are removed explicitly.
      if (hypopgUsed) await session.query('SELECT hypopg_reset()').catch(() => undefined);
      await session.query('ROLLBACK');
    }
  });
}

/** Only a plain SELECT that passes the read check is planned (placeholders stand in as NULL for the check). */
async function whyNotPlanned(db: Db, sql: string): Promise<string | undefined> {
  try {
    const parsed = parseSql(sql);
    if (parsed.statements.length !== 1)
      return `${parsed.statements.length} statements: advice takes one query at a time`;
    if (parsed.statements[0]?.kind !== 'SelectStmt')
      return `not a SELECT (${parsed.statements[0]?.kind ?? 'empty'}): index advice plans reads only`;
    const checked = await checkSql(db, sql.replace(/\$\d+/g, 'NULL'));
    if (checked.decision !== 'run') return `not a plain read: ${checked.reasons.join('; ')}`;
    return undefined;
  } catch (error) {
    return toAgentError(error).message;
  }
}

/** Already inside the advisor's READ ONLY transaction: reads go straight to the session. */
function catalogReaderInTransaction(session: DbSession): CatalogReader {
  let queries = 0;
  return {
    get queries() {
      return queries;
    },
    read: async <Row>(sql: string, params?: readonly unknown[]) => {
      queries++;
      return (await session.query<Row>(sql, params)).rows;
    },
  };
}

async function hypopgState(session: DbSession): Promise<AdviceReport['hypopg']> {
  const { rows } = await session.query<{ installed: boolean; available: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'hypopg') AS installed, EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'hypopg') AS available`,
  );
  return rows[0]?.installed ? 'installed' : rows[0]?.available ? 'available' : 'absent';
}

async function tableSizes(session: DbSession, tables: string[]): Promise<Map<string, number>> {
  if (tables.length === 0) return new Map();
  const { rows } = await session.query<{ name: string; bytes: string }>(
    `SELECT t AS name, pg_table_size(to_regclass(t))::text AS bytes FROM unnest($1::text[]) t`,
    [tables],
  );
  return new Map(rows.map((r) => [r.name, Number(r.bytes)]));
}

function buildSeconds(bytes: number): number {
  return Math.max(1, Math.round((bytes * 1.5) / BUILD_BYTES_PER_SECOND));
}

function heuristicPicks(
  candidates: IndexCandidate[],
  maxIndexes: number,
  tableBytes: Map<string, number>,
): IndexRecommendation[] {
  const picks: IndexCandidate[] = [];
  for (const c of candidates) {
    if (picks.length >= maxIndexes) break;
    // A pick whose columns lead another pick of the same table is served by it.
    if (
      picks.some((p) => p.table === c.table && p.columns.slice(0, c.columns.length).join(',') === c.columns.join(','))
    )
      continue;
    picks.push(c);
  }
  return picks.map((c) => recommendation(c, tableBytes, false, null, null, null, []));
}

function recommendation(
  c: IndexCandidate,
  tableBytes: Map<string, number>,
  measured: boolean,
  bytes: number | null,
  gain: number | null,
  ratio: number | null,
  benefits: IndexBenefit[],
): IndexRecommendation {
  const size = tableBytes.get(c.table) ?? 0;
  return {
    sql: createIndexSql(c),
    table: c.table,
    columns: c.columns,
    include: c.include,
    reasons: c.reasons,
    measured,
    estimatedBytes: bytes,
    gain: gain === null ? null : Math.round(gain * 100) / 100,
    gainRatio: ratio === null ? null : Math.round(ratio * 1000) / 1000,
    benefits,
    buildSecondsEstimate: buildSeconds(size),
    tableBytes: size,
    score: Math.round(c.score * 100) / 100,
  };
}

interface Trial {
  candidate: IndexCandidate;
  oid: number;
  bytes: number;
  costs: Map<number, { cost: number; usesIndex: boolean }>;
  gain: number;
  ratio: number;
}

async function measureGreedy(
  session: DbSession,
  prepared: Prepared[],
  candidates: IndexCandidate[],
  queryTables: Map<number, Set<string>>,
  queries: AdvisedQuery[],
  limits: { budgetBytes: number; minGain: number; maxIndexes: number },
  tableBytes: Map<string, number>,
): Promise<{ recommendations: IndexRecommendation[]; explains: number }> {
  let explains = 0;
  const current = new Map<number, number>();
  for (const p of prepared) {
    explains++;
    const planned = await planCost(session, p.input.sql, p.params);
    const entry = queries[p.id];
    if (!planned) {
      if (entry)
        entry.skipped = 'PostgreSQL could not plan it (a placeholder of unknown type, or an object that is gone)';
      continue;
    }
    current.set(p.id, planned.cost);
    if (entry) entry.costBefore = planned.cost;
  }
  const weightOf = new Map(prepared.map((p) => [p.id, p.input.calls]));
  const plannable = prepared.filter((p) => current.has(p.id));
  const chosen: IndexRecommendation[] = [];
  let spent = 0;
  let remaining = [...candidates];
  while (chosen.length < limits.maxIndexes && remaining.length > 0) {
    let best: Trial | undefined;
    const kept: IndexCandidate[] = [];
    for (const candidate of remaining) {
      const affected = plannable.filter((p) => queryTables.get(p.id)?.has(candidate.table));
      if (affected.length === 0) continue;
      const { rows } = await session.query<{ indexrelid: number; bytes: string }>(
        'SELECT h.indexrelid::int AS indexrelid, hypopg_relation_size(h.indexrelid)::text AS bytes FROM hypopg_create_index($1) h',
        [createIndexSql(candidate, false)],
      );
      const created = rows[0];
      if (!created) continue;
      const bytes = Number(created.bytes);
      const costs = new Map<number, { cost: number; usesIndex: boolean }>();
      let before = 0;
      let after = 0;
      for (const p of affected) {
        explains++;
        const planned = await planCost(session, p.input.sql, p.params);
        const was = current.get(p.id) ?? 0;
        const now = planned?.cost ?? was;
        costs.set(p.id, { cost: now, usesIndex: planned?.plan.includes(`<${created.indexrelid}>`) ?? false });
        const weight = weightOf.get(p.id) ?? 1;
        before += was * weight;
        after += Math.min(was, now) * weight;
      }
      await session.query('SELECT hypopg_drop_index($1)', [created.indexrelid]);
      const gain = before - after;
      const ratio = before > 0 ? gain / before : 0;
      if (spent + bytes > limits.budgetBytes || ratio < limits.minGain) continue;
      kept.push(candidate);
      if (!best || gain > best.gain || (gain === best.gain && bytes < best.bytes))
        best = { candidate, oid: created.indexrelid, bytes, costs, gain, ratio };
    }
    if (!best) break;
    // Keep the winner (hypothetically) so the next round measures what it adds on top of it.
    await session.query('SELECT indexrelid FROM hypopg_create_index($1)', [createIndexSql(best.candidate, false)]);
    const benefits: IndexBenefit[] = [];
    for (const [query, { cost }] of best.costs) {
      const before = current.get(query) ?? cost;
      if (cost < before) {
        benefits.push({
          query,
          costBefore: before,
          costAfter: cost,
          usesIndex: best.costs.get(query)?.usesIndex ?? false,
        });
        current.set(query, cost);
      }
    }
    spent += best.bytes;
    chosen.push(recommendation(best.candidate, tableBytes, true, best.bytes, best.gain, best.ratio, benefits));
    remaining = kept.filter((c) => c !== best?.candidate);
  }
  for (const q of queries) if (current.has(q.id)) q.costAfter = current.get(q.id) ?? null;
  return { recommendations: chosen, explains };
}
