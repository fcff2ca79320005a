/**
 * The job's search index for vector_search: the embeddings of its text files' chunks and of the schema's
 * tables, in `<job>/.index/vectors.json` (a cache beside the job's files, never in its history). Brought
 * up to date at each phase boundary, so that a question in the review chat only embeds itself; whatever
 * changed since is embedded when it is searched.
 */
import { join } from 'node:path';
import type { SchemaSnapshot } from '../../shared/schema';
import { toAgentError } from '../platform/errors';
import type { JobStore } from '../jobs/jobStore';
import type { JobSearchIndexer } from '../jobs/phases/jobGraphDeps';
import type { EmbeddingCache } from '../llm/embeddingCache';
import { sharedEmbeddingCache } from '../llm/embeddingCache';
import type { Embedder } from '../llm/embeddings';
import type { Logger } from '../platform/logger';
import { chunkDocument } from './rankedSearch';
import { SEARCH_INDEX_DIR } from './reviewFiles';
import { researchChunks } from './reviewTools';

export function jobEmbeddings(store: JobStore, jobId: string, embedder: Embedder, logger: Logger): EmbeddingCache {
  return sharedEmbeddingCache(join(store.jobDir(jobId), SEARCH_INDEX_DIR, 'vectors.json'), embedder, logger);
}

/** Embeds what the job's files and the schema hold now; a failure is logged and changes nothing else. */
export async function indexJobForSearch(
  store: JobStore,
  jobId: string,
  embedder: Embedder,
  logger: Logger,
  schema?: () => Promise<SchemaSnapshot>,
): Promise<void> {
  try {
    const { chunks } = await researchChunks({ store, jobId, schema });
    await jobEmbeddings(store, jobId, embedder, logger).vectorsFor(chunks.map(chunkDocument), 'document');
  } catch (error) {
    logger.warn('the job could not be indexed for vector_search; it embeds what it searches when asked', {
      jobId,
      error: toAgentError(error).message,
    });
  }
}

/** The index refresher a job runner is given when an embedding model is configured (jobs sit below review). */
export function jobSearchIndexer(embedder: Embedder, logger: Logger): JobSearchIndexer {
  return (store, jobId, schema) => indexJobForSearch(store, jobId, embedder, logger, schema);
}
