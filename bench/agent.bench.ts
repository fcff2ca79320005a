// Agent overhead per question (SPEC §7: < 50 ms): 100 read questions through the whole ask graph —
// intent, schema context, SQL, validation, read-only run, summary, file checkpoints and audit — with a
// zero-latency scripted model on loopback. Reported with and without the database's own query time
// (measured around every query) and the model's HTTP round trips (measured by the provider).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readOutcome, startAsk } from '../src/core/ask/askRun';
import { fileAuditLog } from '../src/core/ask/audit';
import { FileCheckpointSaver } from '../src/core/ask/fileCheckpointer';
import { buildAskGraph } from '../src/core/ask/graph';
import { newThreadId } from '../src/core/ask/threadId';
import { FileTicketStore } from '../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { createGeminiProvider } from '../src/core/llm/gemini';
import { silentLogger } from '../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { createScratchDatabase, execSql } from '../test/support/scratchDatabase';
import { startScriptedModelServer } from '../test/support/scriptedModelServer';
import { SHOP_SCHEMA } from '../test/support/shopSchema';
import { percentile, report } from './stats';
import { timedDb, timedProvider } from './timed';

const QUESTIONS = 100;

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench');
  const server = await startScriptedModelServer();
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-agent-bench-'));
  const raw = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  try {
    await execSql(scratch.url, SHOP_SCHEMA);
    const snapshot = await raw.withSession((s) => introspectSchema(s));
    const dbTime = { ms: 0 };
    const modelTime = { ms: 0 };
    const provider = createGeminiProvider({
      model: 'gemini-2.5-flash',
      apiKey: 'bench',
      baseUrl: server.url,
      logger: silentLogger,
      maxRetries: 0,
    });
    const graph = buildAskGraph(
      {
        db: timedDb(raw, dbTime),
        connectionKey: 'bench',
        ticketStore: new FileTicketStore(join(dir, 'approvals'), { logger: silentLogger }),
        undoDir: join(dir, 'undo'),
        provider: timedProvider(provider, modelTime),
        loadSnapshot: () => Promise.resolve(snapshot),
        settings: DEFAULT_SAFETY,
        logger: silentLogger,
        requestedBy: 'bench',
        audit: fileAuditLog(join(dir, 'runs')),
      },
      new FileCheckpointSaver(join(dir, 'checkpoints')),
    );
    const totals: number[] = [];
    const withoutDb: number[] = [];
    const overhead: number[] = [];
    for (let i = 0; i < QUESTIONS + 5; i++) {
      server.script([
        { reply: { json: { operation: 'read', tables: ['orders'], confidence: 0.9 } } },
        {
          reply: {
            json: {
              sql: `SELECT status, count(*) AS n FROM orders WHERE id > ${i} GROUP BY status`,
              operation: 'read',
              explanation: 'orders by status',
            },
          },
        },
        { reply: { text: 'Most orders are delivered.' } },
      ]);
      dbTime.ms = 0;
      modelTime.ms = 0;
      const start = performance.now();
      const outcome = await startAsk(graph, newThreadId(), 'how many orders are there by status?');
      const total = performance.now() - start;
      if (outcome.status !== 'done')
        throw new Error(
          `question ${i} ended ${outcome.status}: ${JSON.stringify((await readOutcome(graph, outcome.threadId)).state.error)}`,
        );
      if (i < 5) continue; // warm-up
      totals.push(total);
      withoutDb.push(total - dbTime.ms);
      overhead.push(total - dbTime.ms - modelTime.ms);
    }
    report(
      `ask (read), ${QUESTIONS} questions, total p50 / p95`,
      `${percentile(totals, 50).toFixed(1)} / ${percentile(totals, 95).toFixed(1)} ms`,
    );
    report(
      '  minus database query time, p50 / p95',
      `${percentile(withoutDb, 50).toFixed(1)} / ${percentile(withoutDb, 95).toFixed(1)} ms`,
    );
    report(
      '  minus database and model round trips (agent overhead)',
      `${percentile(overhead, 50).toFixed(1)} / ${percentile(overhead, 95).toFixed(1)} ms`,
    );
  } finally {
    await raw.close();
    await server.close();
    await scratch.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
