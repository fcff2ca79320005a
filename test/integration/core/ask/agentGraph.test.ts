import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileAuditLog } from '../../../../src/core/ask/audit';
import { readOutcome, resumeAsk, startAsk } from '../../../../src/core/ask/askRun';
import type { AskDeps } from '../../../../src/core/ask/deps';
import { FileCheckpointSaver } from '../../../../src/core/ask/fileCheckpointer';
import { buildAskGraph } from '../../../../src/core/ask/graph';
import { newThreadId } from '../../../../src/core/ask/threadId';
import { decideTicket } from '../../../../src/core/approvals/approvalPath';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { createGeminiProvider } from '../../../../src/core/llm/gemini';
import { silentLogger } from '../../../../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { queryValue } from '../../../support/scratchDatabase';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import { postgresAvailable } from '../../../support/services';
import { useShopDatabase } from '../../../support/shopDatabase';
import { SHOP_FINGERPRINT } from '../../../support/shopSchema';

const INTENT = { json: { operation: 'read', tables: ['orders'], confidence: 0.9 } };

describe.runIf(postgresAvailable)('ask graph on PostgreSQL with a scripted model', () => {
  const shop = useShopDatabase();
  let server: ScriptedModelServer;
  let store: FileTicketStore;
  let workspace: string;
  const fingerprint = () => queryValue(shop.scratch.url, SHOP_FINGERPRINT);
  const count = async (sql: string) => Number(await queryValue(shop.scratch.url, sql));

  beforeEach(async () => {
    server = await startScriptedModelServer();
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-ask-graph-'));
    store = new FileTicketStore(join(workspace, 'approvals'), { logger: silentLogger });
  });

  afterEach(async () => {
    await store.close();
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  function graph(
    options: {
      withModel?: boolean;
      timeoutMs?: number;
      retries?: number;
      onSummaryText?: (delta: string) => void;
    } = {},
  ) {
    const deps: AskDeps = {
      db: shop.db,
      connectionKey: shop.scratch.url,
      ticketStore: store,
      provider:
        options.withModel === false
          ? undefined
          : createGeminiProvider({
              model: 'gemini-2.5-flash',
              apiKey: 'test-key',
              baseUrl: server.url,
              logger: silentLogger,
              maxRetries: options.retries ?? 0,
              retryBaseDelayMs: 5,
            }),
      loadSnapshot: () => Promise.resolve(shop.snapshot),
      settings: DEFAULT_SAFETY,
      logger: silentLogger,
      requestedBy: 'tester',
      undoDir: join(workspace, 'undo'),
      audit: fileAuditLog(join(workspace, 'runs')),
      ...(options.timeoutMs === undefined ? {} : { modelTimeoutMs: options.timeoutMs }),
      ...(options.onSummaryText ? { onSummaryText: options.onSummaryText } : {}),
    };
    return buildAskGraph(deps, new FileCheckpointSaver(join(workspace, 'checkpoints')));
  }

  it('answers a read question: rows, schema context shown to the model, rows sent back as untrusted data', async () => {
    server.script([
      { reply: INTENT },
      {
        reply: {
          json: {
            sql: "SELECT count(*)::int AS n FROM orders WHERE status = 'cancelled'",
            operation: 'read',
            explanation: 'counts cancelled orders',
          },
        },
      },
      { reply: { text: 'There are 40 cancelled orders.' } },
    ]);
    const thread = newThreadId();
    const deltas: string[] = [];
    const outcome = await startAsk(
      graph({ onSummaryText: (delta) => deltas.push(delta) }),
      thread,
      'How many orders were cancelled?',
    );
    expect(outcome.status).toBe('done');
    expect(outcome.state.result?.rows).toEqual([[40]]);
    expect(outcome.state.summary).toBe('There are 40 cancelled orders.');
    // The summary was streamed: it arrived in pieces that add up to it.
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('There are 40 cancelled orders.');
    expect(server.requests[2]?.stream).toBe(true);
    expect(outcome.state.usage.calls).toBe(3);

    const sqlRequest = server.requests[1];
    expect(sqlRequest?.text).toContain('orders(');
    const summaryRequest = server.requests[2]?.text ?? '';
    expect(summaryRequest).toMatch(/<untrusted-data>\s*n\s*40\s*<\/untrusted-data>/);

    const audit = readFileSync(join(workspace, 'runs', thread, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(audit.filter((e) => e.type === 'model_call')).toHaveLength(3);
    expect(audit.some((e) => e.type === 'sql')).toBe(true);
  });

  it('holds a write at the approval step with a pending ticket, then runs it once approved', async () => {
    server.script([
      { reply: { json: { operation: 'write', tables: ['orders'], confidence: 0.9 } } },
      {
        reply: {
          json: { sql: 'DELETE FROM orders WHERE id <= 3', operation: 'write', explanation: 'deletes three orders' },
        },
      },
    ]);
    const before = await fingerprint();
    const thread = newThreadId();
    const held = await startAsk(graph(), thread, 'Delete the first three orders');
    expect(held.status).toBe('held');
    const ticketId = held.state.ticketId ?? '';
    expect((await store.get(ticketId))?.status).toBe('PENDING_APPROVAL');
    expect(await fingerprint()).toBe(before);

    // A new graph and checkpointer object: only the files are shared.
    // Still undecided, resuming leaves it held; decided through the one approval path, it goes on.
    expect((await resumeAsk(graph(), store, thread)).status).toBe('held');
    await decideTicket(store, ticketId, { approve: true, by: 'reviewer', comment: 'ok' });
    const done = await resumeAsk(graph(), store, thread);
    expect(done.status).toBe('done');
    expect(done.state.execution?.rows).toBeGreaterThanOrEqual(3);
    expect(done.state.execution?.undoSql).toContain('INSERT INTO');
    expect(readFileSync(done.state.execution?.undoFile ?? '', 'utf8')).toContain(done.state.execution?.undoSql);
    expect(await count('SELECT count(*) FROM orders WHERE id <= 3')).toBe(0);
    expect((await store.get(ticketId))?.status).toBe('EXECUTED');
    expect(await store.list()).toHaveLength(1);
  });

  it('changes nothing when the write is rejected', async () => {
    server.script([
      { reply: { json: { operation: 'write', tables: ['products'], confidence: 0.9 } } },
      {
        reply: {
          json: {
            sql: 'UPDATE products SET price = price * 2 WHERE id = 1',
            operation: 'write',
            explanation: 'doubles a price',
          },
        },
      },
    ]);
    const before = await fingerprint();
    const thread = newThreadId();
    expect((await startAsk(graph(), thread, 'Double the price of product 1')).status).toBe('held');
    const heldState = await resumeAsk(graph(), store, thread);
    await decideTicket(store, heldState.state.ticketId ?? '', { approve: false, by: 'reviewer' });
    const rejected = await resumeAsk(graph(), store, thread);
    expect(rejected.status).toBe('rejected');
    expect(rejected.state.execution).toBeUndefined();
    expect((await store.get(rejected.state.ticketId ?? ''))?.status).toBe('REJECTED');
    expect(await fingerprint()).toBe(before);
  });

  it("repairs SQL with PostgreSQL's error", async () => {
    server.script([
      { reply: INTENT },
      {
        reply: {
          json: { sql: 'SELECT sum(amount) AS total FROM orders', operation: 'read', explanation: 'sums orders' },
        },
      },
      {
        reply: {
          json: {
            sql: 'SELECT count(*)::int AS n FROM orders WHERE total > 290',
            operation: 'read',
            explanation: 'big orders',
          },
        },
      },
      { reply: { text: 'Some orders are big.' } },
    ]);
    const outcome = await startAsk(graph(), newThreadId(), 'How many big orders are there?');
    expect(outcome.status).toBe('done');
    expect(outcome.state.repairAttempts).toBe(1);
    expect(outcome.state.result?.rowCount).toBe(1);
    expect(server.requests[2]?.text).toContain('column "amount" does not exist');
    expect(server.requests[2]?.text).toContain('SELECT sum(amount) AS total FROM orders');
  });

  it('routes by the parsed SQL: a DELETE the model calls a read is still held for approval', async () => {
    server.script([
      { reply: INTENT },
      {
        reply: {
          json: { sql: 'DELETE FROM order_items WHERE id = 1', operation: 'read', explanation: 'just looking' },
        },
      },
    ]);
    const before = await fingerprint();
    const outcome = await startAsk(graph(), newThreadId(), 'Show me order item 1');
    expect(outcome.status).toBe('held');
    expect(outcome.state.modelClaim?.operation).toBe('read');
    expect(outcome.state.classification?.decision).toBe('approve');
    expect(outcome.state.result).toBeUndefined();
    expect((await store.get(outcome.state.ticketId ?? ''))?.status).toBe('PENDING_APPROVAL');
    expect(await fingerprint()).toBe(before);
  });

  it('ends with a clear error and runs nothing when the model is unavailable', async () => {
    server.script([{ reply: { error: { status: 500, message: 'model is down' } }, times: 2 }]);
    const failed = await startAsk(graph(), newThreadId(), 'How many orders are there?');
    expect(failed.status).toBe('failed');
    expect(failed.state.intent?.source).toBe('fallback');
    expect(failed.state.error?.message).toContain('model is down');
    expect(failed.state.sql).toBeUndefined();
    expect(failed.state.result).toBeUndefined();

    server.script([{ reply: { delayMs: 5_000, then: { text: 'late' } }, times: 10 }]);
    const timedOut = await startAsk(graph({ timeoutMs: 200 }), newThreadId(), 'How many orders are there?');
    expect(timedOut.status).toBe('failed');
    expect(timedOut.state.error?.message).toContain('200 ms');

    const noModel = await startAsk(graph({ withModel: false }), newThreadId(), 'How many orders are there?');
    expect(noModel.status).toBe('failed');
    expect(noModel.state.error?.message).toContain('API key');
    expect((await readOutcome(graph(), noModel.threadId)).status).toBe('failed');
    expect(await store.list()).toHaveLength(0);
  });

  it('waits out a 429 with Retry-After and answers', async () => {
    server.script([
      {
        reply: {
          error: { status: 429, message: 'Resource has been exhausted (e.g. check quota).', retryAfterSeconds: 0 },
        },
      },
      { reply: INTENT },
      {
        reply: {
          json: { sql: 'SELECT count(*)::int AS n FROM customers', operation: 'read', explanation: 'counts customers' },
        },
      },
      { reply: { text: 'There are 20 customers.' } },
    ]);
    const outcome = await startAsk(graph({ retries: 2 }), newThreadId(), 'How many customers are there?');
    expect(outcome.status).toBe('done');
    expect(outcome.state.result?.rows).toEqual([[20]]);
    expect(server.requests).toHaveLength(4);
  });

  it('says the model answered garbage, after one repair attempt, and runs nothing', async () => {
    const before = await fingerprint();
    server.script([
      { reply: INTENT },
      { reply: { text: 'this is not { json' } },
      { reply: { text: 'still not JSON, sorry' } },
    ]);
    const outcome = await startAsk(graph(), newThreadId(), 'Delete every order');
    expect(outcome.status).toBe('failed');
    expect(outcome.state.error?.message).toMatch(/invalid|JSON/i);
    expect(outcome.state.sql).toBeUndefined();
    expect(await fingerprint()).toBe(before);
    expect(server.requests[2]?.text).toMatch(/JSON/);
  });
});
