// The review chat's vector_search (issue 14, item 8; plan-review design note): the job's files ranked by
// meaning with the scripted model server's embeddings, indexed at phase boundaries in <job>/.index/, and
// ranked by words (BM25) when no embedding model is configured or it fails.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitAll, initHistory, show } from '../../../../src/core/jobs/jobHistory';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import { createEmbedder } from '../../../../src/core/llm/createProvider';
import type { Embedder } from '../../../../src/core/llm/embeddings';
import { createGeminiProvider } from '../../../../src/core/llm/gemini';
import { silentLogger } from '../../../../src/core/platform/logger';
import { indexJobForSearch } from '../../../../src/core/review/jobSearchIndex';
import { sendReviewMessage } from '../../../../src/core/review/reviewChat';
import { listJobFiles } from '../../../../src/core/review/reviewFiles';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import { bagOfWordsVector, startScriptedModelServer } from '../../../support/scriptedModelServer';

const PLAN = `# Plan: archive old orders

## Step 1: Copy
Copy the orders older than two years to orders_archive, in batches of 10,000 rows.

## Step 2: Delete
Delete the copied rows, oldest first.

## Sign-off
The finance lead confirms the archive window before step 2 runs.
`;
const QUERY = 'who has to approve this?';

/** Scripted meaning: approve, sign-off and confirm are one concept; everything else by its words. */
function conceptVector(text: string): number[] {
  return [...bagOfWordsVector(text), /approve|sign-off|confirms?/i.test(text) ? 10 : 0];
}

describe('vector_search in the review chat', () => {
  let workspace: string;
  let store: JobStore;
  let server: ScriptedModelServer;
  let jobId: string;
  const embedder = (): Embedder => {
    const made = createEmbedder(
      { provider: 'gemini', apiKey: 'k', baseUrl: server.url, embeddingModel: 'gemini-embedding-001' },
      silentLogger,
    );
    if (!made) throw new Error('no embedder');
    return made;
  };

  /** One chat turn in which the model calls vector_search, then answers; what the tool gave it. */
  async function searched(withEmbedder: boolean): Promise<string> {
    server.script([
      { reply: { functionCall: { name: 'vector_search', args: { query: QUERY } } } },
      { reply: { text: 'The finance lead.' } },
    ]);
    const before = server.requests.length;
    await sendReviewMessage(
      {
        store,
        provider: createGeminiProvider({
          model: 'gemini-2.5-flash',
          apiKey: 'k',
          baseUrl: server.url,
          logger: silentLogger,
          maxRetries: 0,
        }),
        logger: silentLogger,
        ...(withEmbedder ? { embedder: embedder() } : {}),
      },
      jobId,
      'Who has to approve the archive?',
    );
    const answer = server.requests[before + 1];
    const offered = JSON.stringify(server.requests[before]?.body);
    expect(offered).toContain('vector_search');
    return answer?.text ?? '';
  }

  beforeEach(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-vector-search-'));
    store = new JobStore(workspace);
    server = await startScriptedModelServer();
    server.embeddings({ vectorOf: conceptVector });
    const job = await store.create({ title: 'Archive old orders', connection: 'local' });
    jobId = job.id;
    await store.writeFile(jobId, 'plan.md', PLAN);
    await store.writeFile(
      jobId,
      'sql/001-copy.sql',
      "INSERT INTO orders_archive SELECT * FROM orders WHERE created_at < now() - interval '2 years';\n",
    );
  });
  afterEach(async () => {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('finds the section that means the question although it shares none of its words, from an index made at the phase boundary', async () => {
    await indexJobForSearch(store, jobId, embedder(), silentLogger);
    const indexFile = join(store.jobDir(jobId), '.index', 'vectors.json');
    expect(existsSync(indexFile)).toBe(true);
    const indexed = server.embedRequests.length;

    const result = await searched(true);
    expect(result).toMatch(/\[1\] plan\.md § Plan: archive old orders › Sign-off/);
    expect(result).toContain('ranked by meaning with gemini-embedding-001');
    // Only the question was embedded: the files were indexed already.
    expect(server.embedRequests.slice(indexed).map((r) => r.texts)).toEqual([[QUERY]]);

    // The index is a cache: not a file of the job for the chat's tools, and not in the job's history.
    expect((await listJobFiles(store, jobId)).entries.map((e) => e.path).filter((p) => p.startsWith('.index'))).toEqual(
      [],
    );
    const dir = store.jobDir(jobId);
    await initHistory(dir);
    const commit = await commitAll(dir, 'phase');
    await expect(show(dir, commit, '.index/vectors.json')).rejects.toThrow(/did not exist/);
    expect(await show(dir, commit, 'plan.md')).toBe(PLAN);
    expect(readFileSync(indexFile, 'utf8')).toContain('gemini-embedding-001');
  });

  it('ranks by words (BM25) without an embedding model, or when it fails, and says so', async () => {
    const byWords = await searched(false);
    expect(byWords).toContain('no embedding model is configured, so this ranked by words (BM25)');
    expect(byWords).not.toMatch(/\[1\] plan\.md § .*Sign-off/); // the words of the question are not in that section

    server.embeddings({ failure: { status: 503, message: 'embedding backend down' } });
    const failed = await searched(true);
    expect(failed).toMatch(
      /the embedding model failed \(.*embedding backend down.*\), so this ranked by words \(BM25\)/,
    );
  });
});
