import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import { findTables } from '../../../../src/core/jobs/phases/readTools';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { musicStoreSql } from '../../../fixtures/musicStoreSchema';
import { runPgAgent } from '../../../support/cliHarness';
import type { ScratchDatabase } from '../../../support/services';
import type { OpenedScratch } from '../../../support/openedScratch';
import { closeScratch, openScratch } from '../../../support/openedScratch';
import { postgresAvailable } from '../../../support/services';

// A budget the whole schema does not fit, so that only ranking decides what the model sees.
const BUDGET = 700;

describe.runIf(postgresAvailable)('schema linking on a music store hidden among look-alike tables', () => {
  let scratch: ScratchDatabase;
  let snapshot: SchemaSnapshot;
  let opened: OpenedScratch | undefined;
  const cwd = mkdtempSync(join(tmpdir(), 'pgagent-linking-'));

  beforeAll(async () => {
    ({ scratch, snapshot } = opened = await openScratch(musicStoreSql(40)));
  });

  afterAll(async () => {
    await closeScratch(opened);
    rmSync(cwd, { recursive: true, force: true });
  });

  const names = (question: string, budget = BUDGET) =>
    buildSchemaContext(snapshot, question, { budgetTokens: budget }).tables.map((t) => t.name);

  it('reads enum labels, CHECK literals, partitions and pg_stats value words from the catalog', () => {
    const table = (name: string) => snapshot.tables.find((t) => t.name === name);
    expect(table('invoice')?.columns.find((c) => c.name === 'status')?.allowedValues).toEqual([
      'paid',
      'refunded',
      'overdue',
    ]);
    expect(table('employee')?.columns.find((c) => c.name === 'title')?.allowedValues).toEqual([
      'Sales Support Agent',
      'General Manager',
      'IT Staff',
    ]);
    expect(table('listening_event_2024_03')?.partitionOf).toEqual({ schema: 'public', table: 'listening_event' });
    expect(table('genre')?.columns.find((c) => c.name === 'name')?.valueWords).toContain('jazz');
    expect(table('customer')?.columns.find((c) => c.name === 'country')?.valueWords).toContain('brazil');
    // Numbers are not words, and columns without statistics get none.
    expect(table('genre')?.columns.find((c) => c.name === 'genre_id')?.valueWords).toBeUndefined();
  });

  it('links a word that is only a value to its column: "jazz" → genre, "Brazil" → customer', () => {
    const jazz = names('Which customers bought jazz music?');
    expect(jazz).toContain('genre');
    expect(names('How many people live in Brazil?').slice(0, 3)).toContain('customer');
  });

  it('pulls in the tables on the shortest join path between matched ones', () => {
    // customer and genre are named (genre through its values); invoice, invoice_line and track only join them.
    const ranked = names('Which customers bought jazz music?');
    for (const needed of ['customer', 'invoice', 'invoice_line', 'track', 'genre'])
      expect(ranked.slice(0, 8)).toContain(needed);
  });

  it('keeps joined matches ahead of look-alikes: nine ticket copies take one place, not nine', () => {
    const ranked = names('Which sales support agent brought in the most revenue?');
    for (const needed of ['employee', 'customer', 'invoice']) expect(ranked.slice(0, 6)).toContain(needed);
    expect(ranked.filter((n) => n.startsWith('crm_support_ticket'))).toHaveLength(1);
  });

  it('collapses numbered copies and partitions into one entry that lists its members', () => {
    const context = buildSchemaContext(snapshot, 'open support tickets per agent and purchase orders per supplier', {
      budgetTokens: BUDGET,
    });
    const tickets = context.tables.filter((t) => t.name.startsWith('crm_support_ticket'));
    expect(tickets).toHaveLength(1);
    expect(tickets[0]?.members).toHaveLength(9);
    expect(tickets[0]?.members).toContain('crm_support_ticket_1');
    const orders = context.tables.filter((t) => t.name.startsWith('purchase_order'));
    expect(orders).toHaveLength(1);
    expect(orders[0]?.members).toHaveLength(15);

    const plays = buildSchemaContext(snapshot, 'listening events per track in March', { budgetTokens: BUDGET });
    expect(plays.tables.filter((t) => t.name.startsWith('listening_event'))).toEqual([
      expect.objectContaining({
        name: 'listening_event',
        members: [
          'listening_event',
          'listening_event_2024_01',
          'listening_event_2024_02',
          'listening_event_2024_03',
          'listening_event_2024_04',
        ],
      }),
    ]);
    expect(plays.text).toContain('-- partitions: listening_event_2024_01');
  });

  it('shows the allowed values of an enum or CHECK column to the model, and links words to them', () => {
    const context = buildSchemaContext(snapshot, 'How many invoices were refunded?', { budgetTokens: BUDGET });
    expect(context.tables[0]?.name).toBe('invoice');
    expect(context.text).toContain("status invoice_status in ('paid', 'refunded', 'overdue')");
  });

  it("gives a job's find_tables the best matches of a few words, values included, one line each", async () => {
    const context = { db: undefined as never, settings: DEFAULT_SAFETY, loadSnapshot: () => Promise.resolve(snapshot) };
    const lines = (await findTables(context, 'jazz')).split('\n');
    expect(lines[0]).toBe('genre: genre_id, name');
    expect(
      (await findTables(context, 'support tickets')).split('\n').filter((l) => l.startsWith('crm_support_ticket')),
    ).toEqual(['crm_support_ticket_9 (+8 like it): ticket_id, customer_name, agent_name, subject, revenue_impact, …']);
    expect(await findTables(context, 'zeppelin')).toBe('No table matches "zeppelin". list_tables shows the names.');
  });

  it('pg-agent context --json gives a collapsed family as one entry with a members list', async () => {
    const run = await runPgAgent(
      ['context', '--db', scratch.url, '--json', '--budget', String(BUDGET), '--', 'support tickets per agent'],
      { cwd },
    );
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as { tables: { name: string; members?: string[] }[] };
    const family = json.tables.filter((t) => t.name.startsWith('crm_support_ticket'));
    expect(family).toHaveLength(1);
    expect(family[0]?.members).toHaveLength(9);
    // Tables that are no family keep exactly the SPEC §6 keys.
    const plain = json.tables.find((t) => !t.name.startsWith('crm_support_ticket'));
    if (plain) expect(Object.keys(plain).sort()).toEqual(['columns', 'name', 'schema', 'score']);
  });
});
