import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import type { SchemaSource } from '../../../../src/core/db/schemaCache';
import { SchemaCache } from '../../../../src/core/db/schemaCache';
import { silentLogger } from '../../../../src/core/platform/logger';
import { musicStoreSql } from '../../../fixtures/musicStoreSchema';
import type { ScriptedModelServer } from '../../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../../support/services';
import { closeScratch, openScratch } from '../../../support/openedScratch';
import { execSql, postgresAvailable } from '../../../support/services';
import { scriptedAsk } from '../../../support/scriptedAsk';

const SUMMARY = { reply: { text: 'Done.' } };
const read = (sql: string) => ({ reply: { json: { sql, operation: 'read', explanation: 'reads it' } } });

describe.runIf(postgresAvailable)('an ask on a schema bigger than its budget, with a scripted model', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let server: ScriptedModelServer;
  let workspace: string;
  let cache: SchemaCache;
  let sources: SchemaSource[];

  beforeAll(async () => {
    ({ scratch, db } = await openScratch(musicStoreSql(40)));
  });

  afterAll(() => closeScratch({ db, scratch }));

  beforeEach(async () => {
    server = await startScriptedModelServer();
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-ask-linking-'));
    cache = new SchemaCache({ dir: join(workspace, 'schema-cache'), logger: silentLogger });
    sources = [];
  });

  afterEach(async () => {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  const ask = (question: string, budget = 400) =>
    scriptedAsk({ db, connectionKey: scratch.url, server, workspace }, question, {
      loadSnapshot: async () => {
        const { snapshot, source } = await cache.get(db, scratch.url);
        sources.push(source);
        return snapshot;
      },
      contextBudgetTokens: budget,
    });

  it('introspects once for a whole ask, not at all for the next one, and again after DDL or invalidate()', async () => {
    const intent = { reply: { json: { operation: 'read', tables: ['genre'], confidence: 0.9 } } };
    server.script([
      intent,
      read('SELECT count(*) AS n FROM genre'),
      SUMMARY,
      intent,
      read('SELECT count(*) AS n FROM genre'),
      SUMMARY,
    ]);
    expect((await ask('How many genres are there?')).status).toBe('done');
    expect(sources.filter((s) => s === 'introspected')).toHaveLength(1);
    expect(sources.length).toBeGreaterThanOrEqual(2); // intent and context both read the schema
    sources = [];
    expect((await ask('How many genres are there?')).status).toBe('done');
    expect(sources).not.toContain('introspected');

    await execSql(scratch.url, 'ALTER TABLE genre ADD COLUMN mood text');
    const afterDdl = await cache.get(db, scratch.url);
    expect(afterDdl.source).toBe('introspected');
    expect(afterDdl.snapshot.tables.find((t) => t.name === 'genre')?.columns.map((c) => c.name)).toContain('mood');
    expect((await cache.get(db, scratch.url)).source).toBe('memory');
    await cache.invalidate(scratch.url);
    expect((await cache.get(db, scratch.url)).source).toBe('introspected');
    // A new process finds the file the first one wrote, and trusts it without introspecting.
    expect(
      (await new SchemaCache({ dir: join(workspace, 'schema-cache'), logger: silentLogger }).get(db, scratch.url))
        .source,
    ).toBe('file');
    await execSql(scratch.url, 'ALTER TABLE genre DROP COLUMN mood');
  });

  it('lets the model pick tables from a compact list, then builds the detailed context around its picks', async () => {
    // Words alone do not lead from "purchased" to invoice lines; the model's pick does.
    server.script([
      { reply: { json: { operation: 'read', tables: ['media_type', 'track', 'invoice_line'], confidence: 0.8 } } },
      read(
        'SELECT m.name, sum(l.quantity) FROM invoice_line l JOIN track t USING (track_id) JOIN media_type m USING (media_type_id) GROUP BY 1',
      ),
      SUMMARY,
    ]);
    const outcome = await ask('What media formats are most purchased?');
    expect(outcome.status).toBe('done');
    const [intentRequest, sqlRequest] = server.requests;
    // Stage one: one short line per table (a family is one line), not the whole schema.
    expect(intentRequest?.text).toContain('crm_support_ticket_9 (+8 like it)');
    expect(intentRequest?.text).toMatch(
      /\ninvoice_line: invoice_line_id, invoice_id, track_id, unit_price, quantity\n/,
    );
    expect(intentRequest?.text).not.toContain('numeric(10,2)');
    // Stage two: the picks are in the detailed context, first.
    expect(outcome.state.schemaContext?.tables.slice(0, 3).sort()).toEqual([
      'public.invoice_line',
      'public.media_type',
      'public.track',
    ]);
    expect(sqlRequest?.text).toContain('invoice_line(invoice_line_id int pk, invoice_id int → invoice.invoice_id');
  });

  it("answers the SQL step's describe_table and find_tables lookups, and keeps what they found in the context", async () => {
    server.script([
      { reply: { json: { operation: 'read', tables: ['playlist'], confidence: 0.5 } } },
      {
        reply: {
          json: {
            sql: '',
            operation: 'read',
            explanation: 'need the artist table',
            lookup: { describe: ['artist', 'no_such_table'], find: ['album artist'] },
          },
        },
      },
      read('SELECT count(*) FROM artist'),
      SUMMARY,
    ]);
    const outcome = await ask('Which playlists contain tracks by AC/DC?', 150);
    expect(outcome.status).toBe('done');
    const lookupAnswer = server.requests[2]?.text ?? '';
    expect(lookupAnswer).toContain('describe_table(artist, no_such_table)');
    expect(lookupAnswer).toContain('artist(artist_id int pk, name text)');
    expect(lookupAnswer).toContain('No table named: no_such_table');
    expect(lookupAnswer).toMatch(/find_tables\("album artist"\):\n(album|artist)/);
    expect(outcome.state.sql).toBe('SELECT count(*) FROM artist');
    expect(outcome.state.schemaContext?.tables).toContain('public.artist');
    expect(outcome.state.schemaContext?.text).toContain('artist(artist_id int pk, name text)');
  });

  it('fails clearly when the model keeps asking for lookups instead of writing SQL', async () => {
    const lookup = {
      reply: { json: { sql: '', operation: 'read', explanation: 'more', lookup: { find: ['anything'] } } },
    };
    server.script([{ reply: { json: { operation: 'read', tables: [], confidence: 0.1 } } }, lookup, lookup, lookup]);
    const outcome = await ask('Something vague');
    expect(outcome.status).toBe('failed');
    expect(outcome.state.error?.message).toContain('kept asking to look tables up');
  });
});
