/**
 * Issue 22, item 6, over MCP: the texts an agent's transcript shows a person (propose_write, ticket_status,
 * run_read) draw hidden characters as stand-ins and flag the statement; the structured JSON and the ticket
 * keep the exact SQL and data; the proposal file VS Code opens says the SQL holds hidden characters.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpSession } from '../../support/mcpClient';
import { pgAgentMcp, textOf } from '../../support/mcpClient';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

const ESC = '\u001b';
const REAL = "UPDATE items SET tag = 'owned-by-agent' WHERE id = 1";
const DECOY = "UPDATE items SET tag = 'reviewed' WHERE id = 1";
const SPOOF = `${REAL} /*${ESC}[2K\r${DECOY} */`;

describe.runIf(postgresAvailable)('pg-agent mcp: hidden characters shown in what a person reads', () => {
  let scratch: ScratchDatabase;
  let mcp: McpSession;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-mcp-hidden-'));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      `CREATE TABLE items (id int PRIMARY KEY, tag text NOT NULL); INSERT INTO items VALUES (1, 'new'), (2, E'a\\u001b[2Kb\\u202Ec')`,
    );
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
  });

  afterAll(async () => {
    await mcp?.close();
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('propose_write and ticket_status show the statement that runs, flagged; the ticket and the JSON keep it exact', async () => {
    const proposed = await mcp.call('propose_write', { sql: SPOOF, reason: `Tag it as reviewed${ESC}[8m (hidden)` });
    expect(proposed.isError, textOf(proposed)).toBeFalsy();
    const text = textOf(proposed);
    expect(text).not.toContain(ESC);
    expect(text).toContain(`${REAL} /*␛[2K␍${DECOY} */`);
    expect(text).toContain(
      '! HIDDEN CHARACTERS: this statement contains 2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍',
    );
    const ticket = (proposed.structuredContent as { ticket: { id: string } }).ticket.id;

    const status = await mcp.call('ticket_status', { ticket_id: ticket });
    expect(textOf(status)).not.toContain(ESC);
    expect(textOf(status)).toContain(`SQL:\n${REAL} /*␛[2K␍${DECOY} */\n! HIDDEN CHARACTERS`);
    expect((status.structuredContent as { sql: string }).sql).toBe(SPOOF);

    // The file VS Code opens: the exact SQL (what runs) under a header that flags it and shows the reason visibly.
    const file = readFileSync(join(workspace, '.pgagent', 'proposals', `${ticket}.sql`), 'utf8');
    expect(file.endsWith(`${SPOOF}\n`)).toBe(true);
    expect(file).toContain('-- WARNING: the SQL below contains 2 hidden characters: ESC at line 1, CR at line 1');
    expect(file.split('\n')[0]).toContain('Tag it as reviewed␛[8m (hidden)');
    expect(await queryValue(scratch.url, 'SELECT tag FROM items WHERE id = 1')).toBe('new');
  });

  it("run_read's text shows a value's hidden characters; its rows stay exact", async () => {
    const read = await mcp.call('run_read', { sql: 'SELECT tag FROM items WHERE id = 2' });
    expect(read.isError, textOf(read)).toBeFalsy();
    // Rows go to the model as JSON lines: ESC is already escaped by JSON, the bidi override is not.
    expect(textOf(read)).toContain('"a\\u001b[2Kb⟨U+202E⟩c"');
    expect(textOf(read)).not.toContain('\u202e');
    expect(textOf(read)).not.toContain(ESC);
    expect((read.structuredContent as { rows: unknown[][] }).rows).toEqual([[`a${ESC}[2Kb\u202Ec`]]);
  });
});
