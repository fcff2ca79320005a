// Collaborative planning (issue 13): our own overhead per round with zero-latency scripted models (two
// servers, Gemini's API and an OpenAI-compatible one, on loopback) — a round's wall time minus the time the
// database and the model round trips took (as the union of their intervals: the two analyses and the two
// reviews run in parallel) — and the size of a session folder after one round and after the plan.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CollabSessionRunner } from '../src/core/collab/collabSession';
import { CollabStore } from '../src/core/collab/sessionStore';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import type { Db, DbSession } from '../src/core/db/db';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { createGeminiProvider } from '../src/core/llm/gemini';
import { createOpenAiCompatibleProvider } from '../src/core/llm/openaiCompatible';
import type { LlmProvider } from '../src/core/llm/provider';
import { silentLogger } from '../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import {
  analysis,
  GOOD_SQL,
  isAnalysis,
  isPlan,
  isReviewOf,
  isSynthesis,
  PLAN,
  review,
  synthesis,
} from '../test/support/collabScript';
import { createScratchDatabase, execSql } from '../test/support/scratchDatabase';
import { startScriptedModelServer } from '../test/support/scriptedModelServer';
import type { ScriptedModelServer } from '../test/support/scriptedModelServer';
import { SHOP_SCHEMA } from '../test/support/shopSchema';
import { percentile, report } from './stats';

const SESSIONS = 20;
const WARM_UP = 3;

/** Busy intervals; their union is the wall time something (database, models) was working. */
class Intervals {
  private spans: [number, number][] = [];
  async time<T>(work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.spans.push([start, performance.now()]);
    }
  }
  reset(): void {
    this.spans = [];
  }
  union(): number {
    const sorted = [...this.spans].sort((a, b) => a[0] - b[0]);
    let total = 0;
    let [from, to] = sorted[0] ?? [0, 0];
    for (const [s, e] of sorted.slice(1)) {
      if (s > to) {
        total += to - from;
        [from, to] = [s, e];
      } else to = Math.max(to, e);
    }
    return total + (to - from);
  }
}

function timedDb(db: Db, busy: Intervals): Db {
  const wrap = (s: DbSession): DbSession => ({
    query: (sql, p) => busy.time(() => s.query(sql, p)),
    queryText: (sql, p) => busy.time(() => s.queryText(sql, p)),
  });
  return {
    kind: db.kind,
    label: db.label,
    query: (sql, p) => busy.time(() => db.query(sql, p)),
    queryText: (sql, p) => busy.time(() => db.queryText(sql, p)),
    withSession: (work) => db.withSession((s) => work(wrap(s))),
    close: () => db.close(),
  };
}

function timedProvider(provider: LlmProvider, busy: Intervals): LlmProvider {
  return {
    name: provider.name,
    model: provider.model,
    complete: (req) => busy.time(() => provider.complete(req)),
    stream: (req, onText) => busy.time(() => provider.stream(req, onText)),
  };
}

function scriptRound(gemini: ScriptedModelServer, openai: ScriptedModelServer): void {
  gemini.script([
    { match: isAnalysis('data/architecture'), reply: { json: analysis('Delete directly', GOOD_SQL) } },
    { match: isReviewOf('B'), reply: { json: review(3, 0) } },
    { match: isSynthesis, reply: { json: synthesis() } },
  ]);
  openai.script([
    { match: isAnalysis('implementation/SQL'), reply: { json: analysis('Count then delete', GOOD_SQL) } },
    { match: isReviewOf('A'), reply: { json: review(2, 0) } },
  ]);
}

function du(dir: string): string {
  return execFileSync('du', ['-sh', '--apparent-size', dir], { encoding: 'utf8' }).split('\t')[0] ?? '?';
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench_collab');
  const [gemini, openai] = await Promise.all([startScriptedModelServer(), startScriptedModelServer()]);
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-collab-bench-'));
  const raw = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  try {
    await execSql(scratch.url, SHOP_SCHEMA);
    const snapshot = await raw.withSession((s) => introspectSchema(s));
    const dbBusy = new Intervals();
    const modelBusy = new Intervals();
    const store = new CollabStore(dir);
    const runner = new CollabSessionRunner({
      store,
      db: timedDb(raw, dbBusy),
      connectionKey: 'bench',
      providers: [
        timedProvider(
          createGeminiProvider({
            model: 'gemini-2.5-pro',
            apiKey: 'bench',
            baseUrl: gemini.url,
            logger: silentLogger,
            maxRetries: 0,
          }),
          modelBusy,
        ),
        timedProvider(
          createOpenAiCompatibleProvider({
            model: 'qwen2.5-coder',
            baseUrl: `${openai.url}/v1`,
            logger: silentLogger,
            maxRetries: 0,
          }),
          modelBusy,
        ),
      ],
      loadSnapshot: () => Promise.resolve(snapshot),
      settings: DEFAULT_SAFETY,
      logger: silentLogger,
    });
    const totals: number[] = [];
    const withoutDb: number[] = [];
    const overhead: number[] = [];
    let lastId = '';
    for (let i = 0; i < SESSIONS + WARM_UP; i++) {
      scriptRound(gemini, openai);
      dbBusy.reset();
      modelBusy.reset();
      const start = performance.now();
      const state = await runner.start({ task: 'Remove cancelled orders created before 2024-03-01', by: 'bench' });
      const total = performance.now() - start;
      if (state.phase !== 'awaiting-decision' || state.currentRound !== 1)
        throw new Error(`session ${i} ended at ${state.phase} after ${state.currentRound} rounds`);
      lastId = state.id;
      if (i < WARM_UP) continue;
      totals.push(total);
      withoutDb.push(total - dbBusy.union());
      overhead.push(total - dbBusy.union() - modelBusy.union());
    }
    const line = (values: number[]) => `${percentile(values, 50).toFixed(1)} / ${percentile(values, 95).toFixed(1)} ms`;
    report(
      `plan new → round 1 converged, ${SESSIONS} sessions (5 model calls, 4 SQL verified), p50 / p95`,
      line(totals),
    );
    report('  minus database time (context, EXPLAIN, impact previews)', line(withoutDb));
    report('  minus database and model round trips (our overhead)', line(overhead));

    const sessionDir = store.sessionDir(lastId);
    report('session folder after round 1', du(sessionDir));
    report('  of which context.json', du(join(sessionDir, 'context.json')));
    report('  of which rounds/1/synthesis.json', du(join(sessionDir, 'rounds', '1', 'synthesis.json')));
    report('  of which audit.jsonl (every prompt and reply)', du(join(sessionDir, 'audit.jsonl')));
    gemini.script([{ match: isPlan, reply: { json: PLAN } }]);
    const start = performance.now();
    const planned = await runner.decide(lastId, { kind: 'option', option: 1 }, 'bench');
    if (planned.phase !== 'planned') throw new Error(`expected planned, got ${planned.phase}`);
    report(
      'decide --option 1 → IMPL_PLAN.md + plan.json (1 model call)',
      `${(performance.now() - start).toFixed(1)} ms`,
    );
    report('session folder after the plan', du(sessionDir));
  } finally {
    await raw.close();
    await Promise.all([gemini.close(), openai.close()]);
    await scratch.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
