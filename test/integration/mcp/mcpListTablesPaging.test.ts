// MCP `list_tables` a page at a time, through the SDK's own client against `pg-agent mcp`: every table once
// across the pages in schema and name order, one schema alone, and a cursor it never gave refused clearly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpSession } from '../../support/mcpClient';
import { errorOf, pgAgentMcp } from '../../support/mcpClient';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

interface Page {
  tables: { table: string }[];
  total: number;
  nextCursor?: string;
}

describe.runIf(postgresAvailable)('list_tables paging', () => {
  let scratch: ScratchDatabase;
  let mcp: McpSession;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-mcp-paging-'));
  const expected: string[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const ddl: string[] = ['CREATE SCHEMA tenant_a; CREATE SCHEMA tenant_b;'];
    for (const schema of ['public', 'tenant_a', 'tenant_b']) {
      for (let i = 0; i < 9; i++) {
        ddl.push(`CREATE TABLE ${schema}.t${i} (id int PRIMARY KEY);`);
        expected.push(`${schema}.t${i}`);
      }
    }
    await execSql(scratch.url, ddl.join('\n'));
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
  });

  afterAll(async () => {
    await mcp?.close();
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('lists every table once across pages, resuming after the last one listed', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const result = await mcp.call('list_tables', { limit: 10, ...(cursor ? { cursor } : {}) });
      expect(result.isError).toBeFalsy();
      const page = result.structuredContent as unknown as Page;
      expect(page.total).toBe(pages === 0 ? 27 : 28);
      expect(page.tables.length).toBeLessThanOrEqual(10);
      seen.push(...page.tables.map((t) => t.table));
      cursor = page.nextCursor;
      pages++;
      // A table added while paging lands where its name sorts; the pages already given stay as they were.
      if (pages === 1) await execSql(scratch.url, 'CREATE TABLE tenant_b.a_late (id int)');
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.filter((t) => t !== 'tenant_b.a_late')).toEqual(expected);
  });

  it('lists one schema alone, and refuses a cursor it never gave', async () => {
    const one = (await mcp.call('list_tables', { schema: 'tenant_a' })).structuredContent as unknown as Page;
    expect(one.tables.map((t) => t.table)).toEqual(expected.filter((t) => t.startsWith('tenant_a.')));
    expect(one.nextCursor).toBeUndefined();
    const bad = await mcp.call('list_tables', { cursor: 'not-a-cursor' });
    expect(bad.isError).toBe(true);
    expect(errorOf(bad).message).toContain('is not one list_tables gave');
  });
});
