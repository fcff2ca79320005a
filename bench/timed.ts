// Wrappers that add the time spent in the database and in model round trips to counters, so benchmarks
// can report the agent's own overhead apart from them.
import type { Db, DbSession } from '../src/core/db/db';
import type { LlmProvider, LlmResponse } from '../src/core/llm/provider';

/** A Db whose every query adds its duration to `spent.ms`. */
export function timedDb(db: Db, spent: { ms: number }): Db {
  const time = async <T>(work: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await work();
    } finally {
      spent.ms += performance.now() - start;
    }
  };
  const wrap = (s: DbSession): DbSession => ({
    query: (sql, params) => time(() => s.query(sql, params)),
    queryText: (sql, params) => time(() => s.queryText(sql, params)),
  });
  return {
    kind: db.kind,
    label: db.label,
    query: (sql, params) => time(() => db.query(sql, params)),
    queryText: (sql, params) => time(() => db.queryText(sql, params)),
    withSession: (work) => db.withSession((s) => work(wrap(s))),
    close: () => db.close(),
  };
}

/** A provider whose calls add their latency to `spent.ms`. */
export function timedProvider(provider: LlmProvider, spent: { ms: number }): LlmProvider {
  const note = (r: LlmResponse) => {
    spent.ms += r.latencyMs;
    return r;
  };
  return {
    name: provider.name,
    model: provider.model,
    complete: async (req) => note(await provider.complete(req)),
    stream: async (req, onText) => note(await provider.stream(req, onText)),
  };
}
