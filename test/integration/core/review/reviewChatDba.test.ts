// Issue 26: the review chat has the job agent's three DBA read tools (db_health, top_queries, advise_indexes)
// in its dba tier, on only when the job's own database is open for the chat (CLI `job chat` with the flags
// naming the job's database, VS Code connected to it). Real PostgreSQL, a real job folder, the real Gemini
// provider against the scripted model server; asserted on what the model was sent and on the database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import { JobStore } from '../../../../src/core/jobs/jobStore';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { ReviewChatDeps } from '../../../../src/core/review/reviewChat';
import { sendReviewMessage } from '../../../../src/core/review/reviewChat';
import { queryValue } from '../../../support/scratchDatabase';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { closeScratch, openScratch } from '../../../support/openedScratch';
import { postgresAvailable } from '../../../support/services';
import { scriptedGemini } from '../../../support/scriptedGemini';

interface GeminiBody {
  contents: {
    role: string;
    parts: { functionResponse?: { name: string; response: { result?: string; error?: string } } }[];
  }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
}

const DBA_TOOLS = ['db_health', 'top_queries', 'advise_indexes'];

describe.runIf(postgresAvailable)(
  'the review chat has the DBA read tools when the job database is open (issue 26)',
  () => {
    let scratch: ScratchDatabase;
    let db: Db;
    let server: ScriptedModelServer;
    let workspace: string;
    let store: JobStore;

    beforeAll(async () => {
      ({ scratch, db } = await openScratch(
        `CREATE TABLE customers (id int PRIMARY KEY, name text);
      CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers (id), total numeric);
      INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 50) g;
      INSERT INTO orders SELECT g, 1 + g % 50, g FROM generate_series(1, 500) g; ANALYZE;`,
      ));
    });
    afterAll(() => closeScratch({ db, scratch }));
    beforeEach(async () => {
      server = await startScriptedModelServer();
      workspace = mkdtempSync(join(tmpdir(), 'pgagent-review-dba-'));
      store = new JobStore(workspace);
    });
    afterEach(async () => {
      await server.close();
      rmSync(workspace, { recursive: true, force: true });
    });

    const deps = (extra: Partial<ReviewChatDeps> = {}): ReviewChatDeps => ({
      store,
      provider: scriptedGemini(server),
      logger: silentLogger,
      ...extra,
    });
    const body = (n: number) => server.requests[n]?.body as GeminiBody;
    const toolNames = (n: number) =>
      (body(n).tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
    const responses = (n: number) =>
      (body(n).contents.at(-1)?.parts ?? []).flatMap((p) => (p.functionResponse ? [p.functionResponse.response] : []));
    const indexCount = async () =>
      Number(await queryValue(scratch.url, "SELECT count(*) FROM pg_indexes WHERE tablename = 'orders'"));

    it('with the database: the tools are offered and run read-only; the findings and advice reach the model, nothing is built', async () => {
      const job = await store.create({
        title: 'Speed up orders',
        connection: scratch.url,
        task: 'Speed up the orders page.',
      });
      const before = await indexCount();
      server.script([
        {
          reply: {
            functionCalls: [
              { name: 'db_health', args: { checks: ['missing_fk_indexes'] } },
              { name: 'advise_indexes', args: { sql: 'SELECT id FROM orders WHERE customer_id = 3' } },
              { name: 'top_queries', args: { order: 'mean', limit: 5 } },
              { name: 'advise_indexes', args: {} },
            ],
          },
        },
        { reply: { text: 'orders.customer_id has no index.' } },
      ]);
      const turn = await sendReviewMessage(deps({ db }), job.id, 'Is the plan missing an index?');
      expect(turn.tiers).toContain('dba');
      expect(toolNames(0)).toEqual(expect.arrayContaining(DBA_TOOLS));
      const [health, advice, top, bad] = responses(1);
      expect(health?.result).toContain('CREATE INDEX CONCURRENTLY ON public.orders (customer_id)');
      expect(health?.result).toMatch(/untrusted/);
      expect(advice?.result).toContain('nothing was built');
      expect(advice?.result).toMatch(/customer_id/);
      // pg_stat_statements is not installed here: it says how to set it up instead of failing.
      expect(top?.result).toContain('pg_stat_statements');
      expect(bad?.error).toMatch(/either sql or top/);
      expect(await indexCount()).toBe(before);
      expect(turn.tools.map((t) => t.name)).toEqual(['db_health', 'advise_indexes', 'top_queries', 'advise_indexes']);
    });

    it('without the database: the tools are not offered, and a call says the dba tier is off', async () => {
      const job = await store.create({
        title: 'Speed up orders',
        connection: scratch.url,
        task: 'Speed up the orders page.',
      });
      server.script([
        { reply: { functionCalls: [{ name: 'db_health', args: {} }] } },
        { reply: { text: 'I cannot check the database here.' } },
      ]);
      const turn = await sendReviewMessage(deps(), job.id, 'Is the database healthy?');
      expect(turn.tiers).not.toContain('dba');
      for (const name of DBA_TOOLS) expect(toolNames(0)).not.toContain(name);
      expect(responses(1)[0]?.error).toMatch(/dba tier is not on/);
    });
  },
);
