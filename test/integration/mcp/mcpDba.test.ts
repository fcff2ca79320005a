// The DBA tools as MCP tools (issue 26): health, top_queries and advise_indexes through the SDK's own client on
// the built `pg-agent mcp`, on the DBA cluster; their structured output is the CLI's --json shape; nothing is built.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpSession } from '../../support/mcpClient';
import { pgAgentMcp } from '../../support/mcpClient';
import type { ScratchDatabase } from '../../support/scratchDatabase';
import { execSql, queryValue } from '../../support/scratchDatabase';
import { createDbaScratch, dbaClusterAvailable } from '../../support/dbaCluster';
import { loadDbaWorkload } from '../../support/dbaWorkload';

describe.runIf(dbaClusterAvailable)('DBA tools over MCP', () => {
  let scratch: ScratchDatabase;
  let mcp: McpSession;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-mcp-dba-'));

  beforeAll(async () => {
    scratch = await createDbaScratch();
    await loadDbaWorkload(scratch.url);
    await execSql(
      scratch.url,
      'CREATE EXTENSION hypopg; CREATE EXTENSION pg_stat_statements; SELECT id, total FROM orders WHERE customer_id = 5',
    );
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
  });
  afterAll(async () => {
    await mcp?.close();
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('health: the findings with evidence and fix SQL, the database text delimited as untrusted', async () => {
    const result = await mcp.call('health', { checks: ['sequences_near_max'] });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { checks: { id: string; findings: { fixSql: string }[] }[] };
    expect(structured.checks.map((c) => c.id)).toEqual(['sequences_near_max']);
    expect(structured.checks[0]?.findings[0]?.fixSql).toBe(
      'ALTER SEQUENCE public.ticket_no AS bigint MAXVALUE 9223372036854775807',
    );
    expect(JSON.stringify(result.content)).toMatch(/untrusted/);
  });

  it('top_queries: the recorded statement with its normalized text', async () => {
    const result = await mcp.call('top_queries', { order: 'calls', limit: 100 });
    const structured = result.structuredContent as { available: boolean; queries: { query: string }[] };
    expect(structured.available).toBe(true);
    expect(structured.queries.map((q) => q.query)).toContain('SELECT id, total FROM orders WHERE customer_id = $1');
  });

  it('advise_indexes: measured, nothing built or held; bad arguments are refused', async () => {
    const result = await mcp.call('advise_indexes', { sql: 'SELECT id, total FROM orders WHERE customer_id = 5' });
    const structured = result.structuredContent as {
      measured: boolean;
      recommendations: { sql: string; ticket?: unknown }[];
    };
    expect(structured.measured).toBe(true);
    expect(structured.recommendations[0]?.sql).toMatch(/^CREATE INDEX CONCURRENTLY ON public\.orders \(customer_id\)/);
    expect(structured.recommendations[0]?.ticket).toBeUndefined();
    expect(
      await queryValue(scratch.url, "SELECT count(*)::int FROM pg_indexes WHERE indexdef LIKE '%(customer_id%'"),
    ).toBe(0);
    expect((await mcp.call('advise_indexes', {})).isError).toBe(true);
    expect((await mcp.call('advise_indexes', { sql: 'SELECT 1', top: 3 })).isError).toBe(true);
  });
});
