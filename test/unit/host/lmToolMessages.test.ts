/** What VS Code shows before our language-model tools run: the SQL, a write's impact, the approved ticket. */
import { describe, expect, it } from 'vitest';
import { LM_TOOL_NAMES } from '../../../src/host/agents/lmToolNames';
import { toolMessage } from '../../../src/host/agents/lmToolMessages';
import { fenced } from '../../../src/host/sqlApproval/approvalTexts';
import type { ToolMessageFacts } from '../../../src/host/agents/lmToolMessages';

const noFacts: ToolMessageFacts = {
  impact: () => Promise.reject(new Error('no impact expected')),
  ticket: () => Promise.reject(new Error('no ticket expected')),
};

describe('language-model tool messages', () => {
  it('asks before anything that runs SQL, and shows that SQL; schema and status lookups just say what they do', async () => {
    const needConfirmation = [];
    for (const name of LM_TOOL_NAMES) {
      const message = await toolMessage(
        name,
        { sql: 'SELECT 1', ticket_id: 'tkt_x', reason: 'r', table: 't', question: 'q' },
        {
          impact: () => Promise.resolve('LOW · 1 row'),
          ticket: () => Promise.resolve({ sql: 'DELETE FROM t', status: 'APPROVED', risk: 'LOW', rows: 1 }),
        },
      );
      expect(message.invocation, name).toMatch(/^Postgres Agent: /);
      if (message.confirmation) needConfirmation.push(name);
    }
    expect(needConfirmation).toEqual([
      'run_read',
      'explain',
      'impact',
      'propose_write',
      'execute_approved',
      'advise_indexes',
    ]);
    const read = await toolMessage('run_read', { sql: 'SELECT * FROM orders' }, noFacts);
    expect(read.confirmation?.markdown).toContain('```sql\nSELECT * FROM orders\n```');
  });

  it("shows a proposed write's measured impact and says that allowing the call approves nothing", async () => {
    const message = await toolMessage(
      'propose_write',
      { sql: 'DELETE FROM orders WHERE id = 1', reason: 'a test order\n**now**' },
      {
        impact: (sql) => Promise.resolve(`impact of ${sql}: LOW · 4 rows in 3 tables`),
        ticket: noFacts.ticket,
      },
    );
    const md = message.confirmation?.markdown ?? '';
    expect(md).toContain('impact of DELETE FROM orders WHERE id = 1: LOW · 4 rows in 3 tables');
    expect(md).toContain('**nothing runs** until you approve it');
    // The model's reason is text: its markdown is escaped, its newlines flattened.
    expect(md).toContain('a test order \\*\\*now\\*\\*');
  });

  it("says when the impact cannot be measured, and shows an execution's ticket SQL rather than anything the model wrote", async () => {
    const failed = await toolMessage(
      'propose_write',
      { sql: 'DELET', reason: 'x' },
      { impact: () => Promise.reject(new Error('syntax error at or near "DELET"')), ticket: noFacts.ticket },
    );
    expect(failed.confirmation?.markdown).toContain(
      '**Impact could not be measured:** syntax error at or near "DELET"',
    );
    const run = await toolMessage(
      'execute_approved',
      { ticket_id: 'tkt_abc', sql: 'DROP TABLE orders' },
      {
        impact: noFacts.impact,
        ticket: () =>
          Promise.resolve({ sql: 'DELETE FROM orders WHERE id = 1', status: 'APPROVED', risk: 'LOW', rows: 4 }),
      },
    );
    expect(run.confirmation?.markdown).toContain('DELETE FROM orders WHERE id = 1');
    expect(run.confirmation?.markdown).not.toContain('DROP TABLE');
    expect(run.confirmation?.markdown).toContain('**APPROVED** · LOW · 4 rows approved');
    const missing = await toolMessage(
      'execute_approved',
      { ticket_id: 'tkt_none' },
      { impact: noFacts.impact, ticket: () => Promise.resolve(undefined) },
    );
    expect(missing.confirmation?.markdown).toContain('There is no ticket tkt\\_none');
  });

  it('fences SQL so that backticks inside cannot close the block', () => {
    const sql = "SELECT '```' AS a, '````' AS b";
    const block = fenced(sql, 'sql');
    expect(block.startsWith('`````sql\n')).toBe(true);
    expect(block.endsWith('\n`````')).toBe(true);
    expect(fenced('SELECT 1', 'sql')).toBe('```sql\nSELECT 1\n```');
  });
});

describe('language-model tool messages: hidden characters (issue 22, item 6)', () => {
  const spoof = "UPDATE items SET tag = 'owned-by-agent' /*\u001b[2K\rUPDATE items SET tag = 'reviewed' */";
  const shown = "UPDATE items SET tag = 'owned-by-agent' /*␛[2K␍UPDATE items SET tag = 'reviewed' */";

  it('shows the statement that runs, every hidden character as a stand-in, and flags it', async () => {
    const message = await toolMessage(
      'propose_write',
      { sql: spoof, reason: 'tag \u202eit' },
      { impact: () => Promise.resolve('LOW · 1 row'), ticket: () => Promise.reject(new Error('none')) },
    );
    const markdown = message.confirmation?.markdown ?? '';
    expect(markdown).toContain(`\`\`\`sql\n${shown}\n\`\`\``);
    expect(markdown).toContain(
      '**⚠ This statement contains 2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍.** It runs with them',
    );
    expect(markdown).toContain('tag ⟨U\\+202E⟩it');
    for (const hidden of ['\u001b', '\r', '\u202e']) expect(markdown).not.toContain(hidden);
  });

  it("execute_approved shows the ticket's own SQL the same way; a plain statement has no flag", async () => {
    const message = await toolMessage(
      'execute_approved',
      { ticket_id: 'tkt_1' },
      {
        impact: () => Promise.reject(new Error('none')),
        ticket: () => Promise.resolve({ sql: spoof, status: 'APPROVED', risk: 'LOW', rows: 1 }),
      },
    );
    expect(message.confirmation?.markdown).toContain(shown);
    expect(message.confirmation?.markdown).toContain('hidden characters');
    const plain = await toolMessage('run_read', { sql: 'SELECT 1' }, noFacts);
    expect(plain.confirmation?.markdown).not.toContain('hidden');
  });
});
