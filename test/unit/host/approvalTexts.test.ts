/** The inline approval's words for a statement holding hidden characters: CodeLens, modal, editor warnings. */
import { describe, expect, it } from 'vitest';
import { approvalConfirmation, hiddenCharacterMarks, pendingLenses } from '../../../src/host/sqlApproval/approvalTexts';
import type { ImpactView } from '../../../src/shared/protocol';
import { impactView } from '../../support/impactReports';

const ESC = '\u001b';
const SPOOF = `UPDATE items SET tag = 'owned-by-agent' WHERE id = 1 /*${ESC}[2K\rUPDATE items SET tag = 'reviewed' WHERE id = 1 */`;

function impact(risk: ImpactView['risk'], extra: Partial<ImpactView> = {}): ImpactView {
  return impactView({
    risk,
    estimatedRows: 1,
    exactRows: 1,
    previewMs: 3,
    tables: [{ schema: 'public', name: 'items', via: 'direct', inserted: 0, updated: 1, deleted: 0 }],
    ...extra,
  });
}

describe('pendingLenses', () => {
  it('a plain statement: risk, Approve & run, Reject, Show impact — no flag', () => {
    expect(pendingLenses(impact('LOW'), "UPDATE items SET tag = 'x' WHERE id = 1").map((l) => l.title)).toEqual([
      '$(warning) LOW · 1 rows in 1 table',
      '$(check) Approve & run',
      '$(x) Reject',
      'Show impact',
    ]);
  });

  it('a statement holding hidden characters is flagged first, and its Approve says it asks again', () => {
    const lenses = pendingLenses(impact('LOW'), SPOOF);
    expect(lenses[0]).toEqual({
      title:
        '$(eye) Hidden characters: this statement contains 2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍',
      command: 'postgresAgent.showImpact',
    });
    expect(lenses[2]).toEqual({
      title: '$(check) Approve & run (hidden characters: asks again)',
      command: 'postgresAgent.approveTicket',
    });
  });

  it("an outside agent's proposal: the button only approves, and says the agent runs it", () => {
    const titles = pendingLenses(impact('LOW'), 'DELETE FROM t WHERE id = 1', false).map((l) => l.title);
    expect(titles).toContain('$(check) Approve for the agent');
    expect(titles.some((t) => t.includes('Approve & run'))).toBe(false);
    expect(pendingLenses(impact('LOW'), SPOOF, false)[2]?.title).toBe(
      '$(check) Approve for the agent (hidden characters: asks again)',
    );
  });

  it('names from the database in a lens are shown, never obeyed', () => {
    const lenses = pendingLenses(
      impact('LOW', { wouldFail: { code: '23505', message: `duplicate key ${ESC}[31mred\u202e` } }),
      'DELETE FROM t',
    );
    expect(lenses[0]?.title).toBe('$(error) Would fail: duplicate key ␛[31mred⟨U+202E⟩');
  });
});

describe('approvalConfirmation', () => {
  it('asks nothing more for a plain LOW write', () => {
    expect(approvalConfirmation(impact('LOW'), 'DELETE FROM t WHERE id = 1')).toBeUndefined();
  });

  it('asks for a LOW write with hidden characters, naming them, the statement shown visibly', () => {
    const asked = approvalConfirmation(impact('LOW'), SPOOF);
    expect(asked?.message).toBe(
      'This statement contains 2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍. It runs exactly as shown below, with them. Run it?',
    );
    expect(asked?.detail).toBe(
      "UPDATE items SET tag = 'owned-by-agent' WHERE id = 1 /*␛[2K␍UPDATE items SET tag = 'reviewed' WHERE id = 1 */",
    );
  });

  it('a HIGH write names rows and tables, and its hidden characters too', () => {
    const plain = approvalConfirmation(impact('HIGH', { exactRows: 1200 }), 'DELETE FROM items');
    expect(plain).toEqual({
      message: 'HIGH risk: this changes 1,200 rows: items (1). Run it?',
      detail: 'DELETE FROM items',
      button: 'Approve & run',
    });
    const both = approvalConfirmation(impact('CRITICAL', { exactRows: 5000 }), `DELETE FROM items -- \u202e`);
    expect(both?.message).toMatch(
      /^This statement contains 1 hidden character: U\+202E RIGHT-TO-LEFT OVERRIDE at line 1 .* CRITICAL risk: this changes 5,000 rows/,
    );
    expect(both?.detail).toBe('DELETE FROM items -- ⟨U+202E⟩');
  });

  it("an outside agent's HIGH proposal asks to approve it for the agent, not to run it", () => {
    const asked = approvalConfirmation(impact('HIGH', { exactRows: 1200 }), 'DELETE FROM items', false);
    expect(asked).toEqual({
      message: 'HIGH risk: this changes 1,200 rows: items (1). Approve it for the agent that proposed it to run?',
      detail: 'DELETE FROM items',
      button: 'Approve for the agent',
    });
  });
});

describe('hiddenCharacterMarks', () => {
  it('marks each hidden character at its place in the document', () => {
    const header = '-- Proposed by agent: tag it\n';
    const marks = hiddenCharacterMarks(SPOOF, header.length);
    expect(marks.map((m) => (header + SPOOF).slice(m.offset, m.offset + m.length))).toEqual([ESC, '\r']);
    expect(marks[0]?.message).toContain('Hidden character ESC (shown elsewhere as ␛)');
    expect(hiddenCharacterMarks('SELECT 1', 0)).toEqual([]);
  });
});
