/** Opening the schema cache as a CLI run, an MCP server or a window does: Redis when reachable, and files. */
import type { Redis } from 'ioredis';
import type { Logger } from '../platform/logger';
import { connectRedis } from '../platform/redisClient';
import { SchemaCache, TRUST_FOR_MS } from './schemaCache';

/** A cache on Redis when a URL is given and reachable; otherwise (with a warning) memory + files. */
export async function openSchemaCache(options: {
  redisUrl?: string;
  dir?: string;
  sampleValues?: boolean;
  logger: Logger;
}): Promise<{ cache: SchemaCache; close(): Promise<void> }> {
  let redis: Redis | undefined;
  if (options.redisUrl) {
    try {
      redis = await connectRedis(options.redisUrl, { logger: options.logger, purpose: 'schema cache' });
    } catch (error) {
      options.logger.warn('schema cache: Redis unavailable, caching in .pgagent/ instead', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const cache = new SchemaCache({
    ...(redis ? { redis } : {}),
    ...(options.dir ? { dir: options.dir } : {}),
    ...(options.sampleValues ? { sampleValues: true } : {}),
    trustForMs: TRUST_FOR_MS,
    logger: options.logger,
  });
  return {
    cache,
    close: async () => {
      cache.dispose();
      await redis?.quit().catch(() => redis?.disconnect());
    },
  };
}
