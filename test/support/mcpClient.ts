/** Starts the built `pg-agent mcp` (dist/cli.js) as a child process and talks to it with the SDK's own client. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const CLI_PATH = join(process.cwd(), 'dist', 'cli.js');

/** The tools `pg-agent mcp` lists, in its order (SPEC's MCP contract): what every launch of it must offer. */
export const MCP_TOOL_NAMES = [
  'list_tables',
  'describe_table',
  'schema_context',
  'run_read',
  'explain',
  'impact',
  'propose_write',
  'ticket_status',
  'execute_approved',
  'health',
  'top_queries',
  'advise_indexes',
];

export interface McpSession {
  client: Client;
  /** A tool call; tool errors come back as results (isError), protocol errors throw. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** What the server wrote to stderr (its log). */
  stderr(): string;
  close(): Promise<void>;
}

export async function startMcp(launch: {
  command: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
}): Promise<McpSession> {
  if (!existsSync(CLI_PATH)) throw new Error('dist/cli.js is missing: run npm run build first (npm test builds it).');
  const transport = new StdioClientTransport({
    command: launch.command,
    args: launch.args,
    ...(launch.cwd ? { cwd: launch.cwd } : {}),
    // Only what the server needs: no DATABASE_URL or REDIS_URL of the test runner leaks in.
    env: { ...getDefaultEnvironment(), USER: 'mcp-tester', ...launch.env },
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString('utf8');
  });
  const client = new Client({ name: 'pgagent-test-client', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    stderr: () => log,
    close: () => client.close(),
  };
}

export function pgAgentMcp(args: string[], env: Record<string, string> = {}): Promise<McpSession> {
  return startMcp({ command: process.execPath, args: [CLI_PATH, 'mcp', ...args], env });
}

/** The text parts of a result, joined. */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** The `{ error: { code, message, advice } }` part of a tool error. */
export function errorOf(result: CallToolResult): { code: string; message: string; advice?: string } {
  if (!result.isError) throw new Error(`expected a tool error, got: ${textOf(result).slice(0, 500)}`);
  for (const c of result.content) {
    if (c.type !== 'text' || !c.text.startsWith('{')) continue;
    const parsed = JSON.parse(c.text) as { error?: { code: string; message: string; advice?: string } };
    if (parsed.error) return parsed.error;
  }
  throw new Error(`tool error without a code: ${textOf(result)}`);
}
