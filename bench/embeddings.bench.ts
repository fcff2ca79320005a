// What the embedding signal (issue 14, item 8) costs, with the scripted model server on loopback standing
// in for the provider (so the numbers are this project's own work and the transfer, not a model's time):
// the 2,000-table music store among look-alikes, embedded once; then each question; then a new process's
// first question, reading the cache file. Recall is not reported: scripted vectors know no meaning.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildSchemaContext } from '../src/core/ask/schemaContext';
import { semanticScores } from '../src/core/ask/semanticSignal';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { createEmbedder } from '../src/core/llm/createProvider';
import { EmbeddingCache } from '../src/core/llm/embeddingCache';
import { silentLogger } from '../src/core/platform/logger';
import { MUSIC_STORE_QUESTIONS, musicStoreSql } from '../test/fixtures/musicStoreSchema';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { startScriptedModelServer } from '../test/support/scriptedModelServer';
import { percentile, report } from './stats';

const NOISE = 1950;

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_embeddings');
  const server = await startScriptedModelServer();
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-embeddings-bench-'));
  const setup = new pg.Client({ connectionString: scratch.url });
  try {
    await setup.connect();
    await setup.query(musicStoreSql(NOISE));
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    const snapshot = await db.withSession((s) => introspectSchema(s));
    await db.close();
    const embedder = createEmbedder(
      { provider: 'gemini', apiKey: 'bench', baseUrl: server.url, embeddingModel: 'gemini-embedding-001' },
      silentLogger,
    );
    if (!embedder) throw new Error('no embedder');
    const file = join(dir, 'embeddings.json');
    const cache = new EmbeddingCache(file, embedder, silentLogger);
    const questions = MUSIC_STORE_QUESTIONS.map((q) => q.question);

    let started = performance.now();
    await semanticScores(snapshot, questions[0] ?? '', cache, silentLogger);
    const first = performance.now() - started;
    report(
      `first question on ${snapshot.tables.length} tables (each entry embedded, a family as one)`,
      `${first.toFixed(0)} ms, ${server.embedRequests.length} requests, ${cache.stats.embedded} texts`,
    );
    report(
      '  cache file',
      `${(statSync(file).size / 1024).toFixed(1)} KiB (64-dimension scripted vectors; Gemini's are cut to 768)`,
    );

    const perQuestion: number[] = [];
    const withWords: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const question of questions) {
        started = performance.now();
        const semantic = await semanticScores(snapshot, `${question} (${round})`, cache, silentLogger);
        perQuestion.push(performance.now() - started);
        started = performance.now();
        buildSchemaContext(snapshot, question, { budgetTokens: 6000, ...(semantic ? { semantic } : {}) });
        withWords.push(performance.now() - started);
      }
    }
    report(
      'each later question: embed it and compare, p50 / p95',
      `${percentile(perQuestion, 50).toFixed(1)} / ${percentile(perQuestion, 95).toFixed(1)} ms, 1 request, cache hits ${cache.stats.hits}`,
    );
    report('  then the ranking with the signal, p50', `${percentile(withWords, 50).toFixed(1)} ms`);

    const fresh = new EmbeddingCache(file, embedder, silentLogger);
    started = performance.now();
    await semanticScores(snapshot, questions[1] ?? '', fresh, silentLogger);
    report(
      "a new process's first question (reads the cache file)",
      `${(performance.now() - started).toFixed(0)} ms, ${fresh.stats.embedded} text embedded`,
    );
  } finally {
    await setup.end();
    await server.close();
    await scratch.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
