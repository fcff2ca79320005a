// The session runner itself on real PostgreSQL with a scripted Gemini server: a cancelled round keeps the
// session as it was (and goes on later), and a session folder whose files link outside is refused.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CollabDeps } from '../../../../src/core/collab/collabSession';
import { CollabSessionRunner } from '../../../../src/core/collab/collabSession';
import { gatherContext } from '../../../../src/core/collab/gatherContext';
import { CollabStore } from '../../../../src/core/collab/sessionStore';
import { loadParser } from '../../../../src/core/sql/parse';
import { introspectSchema } from '../../../../src/core/db/introspect';
import { createGeminiProvider } from '../../../../src/core/llm/gemini';
import { silentLogger } from '../../../../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import {
  analysis,
  convergingRound,
  GOOD_SQL,
  isAnalysis,
  isReviewOf,
  isSynthesis,
  review,
  synthesis,
} from '../../../support/collabScript';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import { postgresAvailable } from '../../../support/services';
import { useShopDatabase } from '../../../support/shopDatabase';

describe.runIf(postgresAvailable)('collaborative planning session runner', () => {
  const shop = useShopDatabase();
  let server: ScriptedModelServer;
  let workspace: string;

  beforeEach(async () => {
    server = await startScriptedModelServer();
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-collab-'));
  });
  afterEach(async () => {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  /** The runner on the shop database with the scripted model; `extra`: a cancel signal, a save hook. */
  const runner = (extra: Partial<CollabDeps> = {}) =>
    new CollabSessionRunner({
      store: new CollabStore(workspace),
      db: shop.db,
      connectionKey: 'test',
      providers: [
        createGeminiProvider({
          model: 'gemini-2.5-pro',
          apiKey: 'k',
          baseUrl: server.url,
          logger: silentLogger,
          maxRetries: 0,
        }),
      ],
      loadSnapshot: () => shop.db.withSession((s) => introspectSchema(s)),
      settings: DEFAULT_SAFETY,
      logger: silentLogger,
      ...extra,
    });

  it('a cancelled round keeps the session where it was; more analysis goes on from there', async () => {
    const controller = new AbortController();
    let created = '';
    // The analyses "think" until the person cancels.
    server.script([{ times: 2, reply: { delayMs: 30_000, then: { json: analysis('slow', GOOD_SQL) } } }]);
    const cancelled = runner({
      signal: controller.signal,
      onSaved: (state) => {
        created = state.id;
        if (state.phase === 'analysis' && server.requests.length === 0)
          setTimeout(() => controller.abort(new Error('cancelled by the person')), 200);
      },
    }).start({ task: 'Remove cancelled orders created before 2024-03-01', by: 'tester' });
    await expect(cancelled).rejects.toThrow();
    const store = new CollabStore(workspace);
    const kept = await store.get(created);
    expect(kept).toMatchObject({ phase: 'analysis', currentRound: 0, rounds: [] });
    expect(kept.lastError?.message).toMatch(/cancel/i);
    expect(readFileSync(join(store.sessionDir(created), 'audit.jsonl'), 'utf8')).toContain('"type":"error"');

    server.script(convergingRound());
    const resumed = await runner().decide(created, { kind: 'more' }, 'tester');
    expect(resumed).toMatchObject({ phase: 'awaiting-decision', currentRound: 1, lastError: null });
  });

  it('context gathering explains the reads the task names (read-only), sizes, statistics and FK paths', async () => {
    await loadParser();
    const snapshot = await shop.db.withSession((s) => introspectSchema(s));
    const task =
      'Speed up this report:\n```sql\nSELECT customer_id, sum(total) FROM orders GROUP BY customer_id\n```\nand never run: ```DELETE FROM orders```';
    const context = await gatherContext(shop.db, snapshot, task, { statementTimeoutMs: 5000, lockTimeoutMs: 1000 });
    expect(context.explains).toHaveLength(1); // the DELETE is not a read: never explained
    expect(context.explains[0]?.error).toBeNull();
    expect(JSON.stringify(context.explains[0]?.plan)).toContain('"Node Type":"Aggregate"');
    const orders = context.tables.find((t) => t.name === 'orders');
    expect(orders?.indexes.some((i) => i.includes('orders_pkey'))).toBe(true);
    expect(orders?.stats).toMatchObject({ n_live_tup: expect.any(Number) as number });
    expect(context.tokens).toBeLessThanOrEqual(context.budgetTokens);
  });

  it('one driver at a time: a live process holding the session refuses a step; a lock left by an ended process is taken over', async () => {
    server.script([
      { match: isAnalysis('data/architecture'), times: 2, reply: { json: analysis('Delete directly', GOOD_SQL) } },
      { match: isAnalysis('implementation/SQL'), times: 2, reply: { json: analysis('Count then delete', GOOD_SQL) } },
      { match: isReviewOf('B'), times: 2, reply: { json: review(3, 0) } },
      { match: isReviewOf('A'), times: 2, reply: { json: review(3, 0) } },
      { match: isSynthesis, times: 2, reply: { json: synthesis() } },
    ]);
    const first = await runner().start({ task: 'Remove cancelled orders created before 2024-03-01', by: 'tester' });
    const store = new CollabStore(workspace);
    const lockFile = join(store.sessionDir(first.id), 'run.lock');
    writeFileSync(
      lockFile,
      JSON.stringify({ pid: process.pid, host: hostname(), what: 'the decision more', at: '2026-01-01T00:00:00Z' }),
    );
    await expect(runner().decide(first.id, { kind: 'more' }, 'tester')).rejects.toThrow(
      `is busy: the decision more runs in process ${process.pid}`,
    );
    const ended = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(
      lockFile,
      JSON.stringify({ pid: ended, host: hostname(), what: 'the decision more', at: '2026-01-01T00:00:00Z' }),
    );
    const after = await runner().decide(first.id, { kind: 'more' }, 'tester');
    expect(after.currentRound).toBe(2);
    expect(existsSync(lockFile)).toBe(false);
  });

  it('refuses a session folder or file that links outside .pgagent/collab', async () => {
    const store = new CollabStore(workspace);
    const outside = mkdtempSync(join(tmpdir(), 'pgagent-outside-'));
    try {
      mkdirSync(store.root, { recursive: true });
      writeFileSync(join(outside, 'session-state.json'), '{}');
      symlinkSync(outside, join(store.root, 'collab_0123456789abcdef'));
      await expect(store.get('collab_0123456789abcdef')).rejects.toThrow('links outside .pgagent/collab');
      mkdirSync(join(store.root, 'collab_fedcba9876543210'));
      symlinkSync(join(outside, 'session-state.json'), join(store.root, 'collab_fedcba9876543210', 'IMPL_PLAN.md'));
      await expect(store.writeText('collab_fedcba9876543210', 'IMPL_PLAN.md', 'x')).rejects.toThrow(
        'IMPL_PLAN.md links outside the session folder',
      );
      expect(readFileSync(join(outside, 'session-state.json'), 'utf8')).toBe('{}');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
