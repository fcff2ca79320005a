// Meaning, not only spelling (issue 14, item 8): table embeddings from the scripted model server (Gemini's
// batchEmbedContents through @google/genai, and an OpenAI-compatible /v1/embeddings) as one more ranking
// signal, cached by text, with words as the fallback when the embedding model fails.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import { semanticScores } from '../../../../src/core/ask/semanticSignal';
import type { Db } from '../../../../src/core/db/db';
import { introspectSchema } from '../../../../src/core/db/introspect';
import { createEmbedder } from '../../../../src/core/llm/createProvider';
import { EmbeddingCache } from '../../../../src/core/llm/embeddingCache';
import type { Embedder } from '../../../../src/core/llm/embeddings';
import type { Logger } from '../../../../src/core/platform/logger';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import { bagOfWordsVector, startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { closeScratch, openScratch } from '../../../support/openedScratch';
import { execSql, postgresAvailable } from '../../../support/services';
import { scriptedAsk } from '../../../support/scriptedAsk';

/** Thirty tables of a shipping company, and the one a question about sailors needs, named with another word. */
const NOISE = [
  'orders',
  'order_lines',
  'products',
  'product_prices',
  'invoices',
  'payments',
  'shipments',
  'carriers',
  'warehouses',
  'stock_levels',
  'suppliers',
  'purchase_orders',
  'returns',
  'refunds',
  'coupons',
  'campaigns',
  'customers',
  'addresses',
  'regions',
  'currencies',
  'tax_rates',
  'carts',
  'cart_items',
  'reviews',
  'wishlists',
  'categories',
  'brands',
  'gift_cards',
  'audit_events',
  'sessions',
];
const SCHEMA = [
  ...NOISE.map((name) => `CREATE TABLE ${name} (id bigint PRIMARY KEY, created_at timestamptz, note text);`),
  'CREATE TABLE crew_roster (id bigint PRIMARY KEY, member_name text, boarded_on date, rank text);',
].join('\n');
const QUESTION = 'Which sailors signed on last year?';

/** The scripted "meaning": sailor and crew are one concept (they share no spelling, and no synonym list has them), words otherwise. */
function conceptVector(text: string): number[] {
  const vector = bagOfWordsVector(text);
  if (/sailor|crew/i.test(text)) vector.push(12);
  else vector.push(0);
  return vector;
}

function warnings(): { logger: Logger; seen: string[] } {
  const seen: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (message: string) => void seen.push(message) };
  return { logger, seen };
}

describe.runIf(postgresAvailable)('schema linking with an embedding model (scripted)', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let snapshot: SchemaSnapshot;
  let server: ScriptedModelServer;
  let workspace: string;
  const gemini = (): Embedder => {
    const embedder = createEmbedder(
      { provider: 'gemini', apiKey: 'test-key', baseUrl: server.url, embeddingModel: 'gemini-embedding-001' },
      silentLogger,
    );
    if (!embedder) throw new Error('no embedder');
    return embedder;
  };
  const contextTables = (semantic?: ReadonlyMap<string, number>) =>
    buildSchemaContext(snapshot, QUESTION, { budgetTokens: 60, ...(semantic ? { semantic } : {}) }).tables.map(
      (t) => t.name,
    );

  beforeAll(async () => {
    ({ scratch, db, snapshot } = await openScratch(SCHEMA));
  });
  afterAll(() => closeScratch({ db, scratch }));
  beforeEach(async () => {
    server = await startScriptedModelServer();
    server.embeddings({ vectorOf: conceptVector });
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-embeddings-'));
  });
  afterEach(async () => {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('lifts the table a question means but never spells, and embeds each table once', async () => {
    // By words alone the question names no table: crew_roster is not what the model would be shown first.
    expect(contextTables()[0]).not.toBe('crew_roster');
    const cache = new EmbeddingCache(join(workspace, 'embeddings.json'), gemini(), silentLogger);
    const semantic = await semanticScores(snapshot, QUESTION, cache, silentLogger);
    expect(semantic?.size).toBe(NOISE.length + 1);
    expect(contextTables(semantic)[0]).toBe('crew_roster');
    expect(server.embedRequests.map((r) => [r.provider, r.model, r.texts.length])).toEqual([
      ['gemini', 'gemini-embedding-001', NOISE.length + 1],
      ['gemini', 'gemini-embedding-001', 1],
    ]);
    expect(server.embedRequests[0]?.texts.find((t) => t.startsWith('crew'))).toBe(
      'crew roster; columns: id, member name, boarded on, rank',
    );

    // A second question, and a new process reading the file: only the questions are embedded.
    await semanticScores(snapshot, 'Who is the most senior sailor?', cache, silentLogger);
    const fresh = new EmbeddingCache(join(workspace, 'embeddings.json'), gemini(), silentLogger);
    await semanticScores(snapshot, QUESTION, fresh, silentLogger);
    expect(server.embedRequests.slice(2).map((r) => r.texts.length)).toEqual([1, 1]);
    expect(JSON.parse(readFileSync(join(workspace, 'embeddings.json'), 'utf8'))).toMatchObject({
      model: 'gemini-embedding-001',
    });

    // A schema change re-embeds only the table it touched.
    await execSql(scratch.url, 'ALTER TABLE crew_roster ADD COLUMN ship text');
    const changed = await db.withSession((s) => introspectSchema(s));
    await semanticScores(changed, QUESTION, fresh, silentLogger);
    expect(server.embedRequests.at(-1)?.texts).toEqual([
      'crew roster; columns: id, member name, boarded on, rank, ship',
    ]);
    await execSql(scratch.url, 'ALTER TABLE crew_roster DROP COLUMN ship');
  });

  it('an OpenAI-compatible endpoint (/v1/embeddings) gives the same signal', async () => {
    const embedder = createEmbedder(
      { provider: 'openai-compatible', baseUrl: `${server.url}/v1`, embeddingModel: 'nomic-embed-text' },
      silentLogger,
    );
    if (!embedder) throw new Error('no embedder');
    const semantic = await semanticScores(
      snapshot,
      QUESTION,
      new EmbeddingCache(join(workspace, 'e.json'), embedder, silentLogger),
      silentLogger,
    );
    expect(contextTables(semantic)[0]).toBe('crew_roster');
    expect(server.embedRequests[0]).toMatchObject({ provider: 'openai', model: 'nomic-embed-text' });
  });

  it('an embedding model that fails, answers garbage or the wrong number of vectors: ranked by words, and the log says why', async () => {
    const failures = [
      { failure: { status: 500, message: 'embedding backend down' } },
      { failure: { garbage: true as const } },
      { vectorOf: () => [] },
    ];
    for (const script of failures) {
      server.embeddings(script);
      const { logger, seen } = warnings();
      const semantic = await semanticScores(
        snapshot,
        QUESTION,
        new EmbeddingCache(join(workspace, `${seen.length}-${Math.random()}.json`), gemini(), logger),
        logger,
      );
      expect(semantic).toBeUndefined();
      expect(seen).toEqual(['embeddings are not available for this question; the schema is ranked by words only']);
    }
    expect(createEmbedder({ provider: 'gemini', apiKey: 'k', embeddingModel: '' }, silentLogger)).toBeUndefined();
  });

  it('an ask with embeddings shows the model the table it means', async () => {
    server.script([
      { reply: { json: { operation: 'read', tables: [], confidence: 0.2 } } },
      { reply: { json: { sql: 'SELECT member_name FROM crew_roster', operation: 'read', explanation: 'reads it' } } },
      { reply: { text: 'Nobody yet.' } },
    ]);
    const outcome = await scriptedAsk({ db, connectionKey: scratch.url, server, workspace }, QUESTION, {
      loadSnapshot: () => Promise.resolve(snapshot),
      contextBudgetTokens: 60,
      embeddings: new EmbeddingCache(join(workspace, 'embeddings.json'), gemini(), silentLogger),
    });
    expect(outcome.status).toBe('done');
    expect(server.requests[1]?.text).toContain('crew_roster(');
  });
});
