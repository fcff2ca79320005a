// What `pg-agent mcp` costs an agent on loopback: start to a listed toolset, a read's round trip through
// the protocol against the same read in-process (the difference is the MCP layer: JSON-RPC over stdio,
// schema validation on both sides, the untrusted-data text), and a proposed write (preview + ticket).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { runRead } from '../src/core/sql/runRead';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { pgAgentMcp } from '../test/support/mcpClient';
import { createScratchDatabase, execSql } from '../test/support/scratchDatabase';
import { SHOP_SCHEMA } from '../test/support/shopSchema';
import { percentile, report, timeRuns } from './stats';

const READ = 'SELECT id, email, name FROM customers ORDER BY id LIMIT 20';

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench');
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-bench-mcp-'));
  try {
    await execSql(scratch.url, SHOP_SCHEMA);
    const started = performance.now();
    const mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
    const { tools } = await mcp.client.listTools();
    report(`start → initialize → ${tools.length} tools listed`, performance.now() - started, 'ms');
    try {
      await mcp.call('run_read', { sql: READ });
      const overMcp = await timeRuns(50, () => mcp.call('run_read', { sql: READ }));
      report('run_read of 20 rows over MCP, p50 of 50', percentile(overMcp, 50), 'ms');
      report('run_read of 20 rows over MCP, p95 of 50', percentile(overMcp, 95), 'ms');
      const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
      try {
        await runRead(db, READ, true, DEFAULT_SAFETY);
        const direct = await timeRuns(50, () => runRead(db, READ, true, DEFAULT_SAFETY));
        report('the same read in-process (runRead), p50 of 50', percentile(direct, 50), 'ms');
        report('MCP layer per read (p50 difference)', percentile(overMcp, 50) - percentile(direct, 50), 'ms');
      } finally {
        await db.close();
      }
      let n = 0;
      const proposals = await timeRuns(10, () =>
        mcp.call('propose_write', { sql: `UPDATE orders SET status = 'x' WHERE id = ${++n}`, reason: 'bench' }),
      );
      report('propose_write (preview + ticket + files), p50 of 10', percentile(proposals, 50), 'ms');
    } finally {
      await mcp.close();
    }
  } finally {
    rmSync(workspace, { recursive: true, force: true });
    await scratch.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
