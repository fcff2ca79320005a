/** The job agent's read tools (core) take a smaller context; this builds it from an MCP tool's. */
import type { ReadToolContext } from '../core/jobs/phases/readTools';
import { untrustedData } from '../core/ask/modelCall';
import type { McpToolContext } from './toolContext';

export async function readToolContext(context: McpToolContext): Promise<ReadToolContext> {
  return { db: await context.openDb(), settings: context.settings, loadSnapshot: context.loadSchema };
}

/** Schema facts come from the database too (names, comments): delimited as untrusted data for the model. */
export function schemaForModel(intro: string, value: unknown): string {
  return `${intro}\n${untrustedData(JSON.stringify(value, null, 1))}`;
}
