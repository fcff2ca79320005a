/**
 * Picks where approval tickets live: the team's Redis when one is configured, else the workspace's
 * `.pgagent/approvals/` folder.
 */
import type { Logger } from '../platform/logger';
import { FileTicketStore } from './fileTicketStore';
import { openRedisTicketStore } from './redisTicketStore';
import type { TicketStore } from './ticketStore';

export interface OpenTicketStoreOptions {
  /** postgresAgent.redisUrl / REDIS_URL; empty or missing means files. */
  redisUrl?: string;
  approvalsDir: string;
  logger: Logger;
  /** Redis key prefix (default "pgagent:"). */
  prefix?: string;
}

/**
 * A configured Redis that is down is an error, never a quiet switch to files: approvals split between
 * two stores would let a teammate approve a ticket the executing machine cannot see.
 */
export async function openTicketStore(options: OpenTicketStoreOptions): Promise<TicketStore> {
  const redisUrl = options.redisUrl?.trim();
  if (redisUrl) {
    return openRedisTicketStore(redisUrl, { logger: options.logger, prefix: options.prefix });
  }
  options.logger.info('approval tickets in workspace files', { dir: options.approvalsDir });
  return new FileTicketStore(options.approvalsDir, { logger: options.logger });
}
