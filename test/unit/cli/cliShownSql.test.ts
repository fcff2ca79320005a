/** The terminal's side of issue 22 item 6: the approval question, impact text, list lines and the syntax caret. */
import { describe, expect, it } from 'vitest';
import { promptApproval } from '../../../src/cli/approvalPrompt';
import { renderTodos } from '../../../src/cli/jobReport';
import { caretAt, renderImpact } from '../../../src/core/present/renderImpact';
import { shownOneLine, shownStatement } from '../../../src/core/present/shownSql';
import type { ImpactReport } from '../../../src/shared/impactReport';
import { visibleSql } from '../../../src/shared/visibleSql';
import { impactReport } from '../../support/impactReports';

const ESC = '\u001b';

function impact(risk: ImpactReport['risk'], extra: Partial<ImpactReport> = {}): ImpactReport {
  return impactReport({
    statements: ['UPDATE t SET x = 1'],
    estimatedRows: 1,
    exactRows: 1,
    tables: [{ schema: 'public', name: 't', via: 'direct', inserted: 0, updated: 1, deleted: 0 }],
    risk,
    previewMs: 2,
    ...extra,
  });
}

/** The question asked and the decision for each answer. */
async function ask(
  report: ImpactReport,
  sql: string,
  answer: string,
): Promise<{ question: string; approved: boolean }> {
  let question = '';
  const approved = await promptApproval(
    (q) => {
      question = q;
      return Promise.resolve(answer);
    },
    report,
    visibleSql(sql).hidden,
  );
  return { question, approved };
}

describe('the terminal approval question', () => {
  it('a plain LOW write takes y', async () => {
    expect(await ask(impact('LOW'), 'UPDATE t SET x = 1', 'y')).toEqual({
      question: 'Approve and run? [y/N] ',
      approved: true,
    });
  });

  it('a LOW write holding hidden characters says so and takes only "yes" typed in full', async () => {
    const sql = `UPDATE t SET x = 1 -- ${ESC}[2K\r`;
    const y = await ask(impact('LOW'), sql, 'y');
    expect(y).toEqual({
      question: 'This statement holds 2 hidden characters (shown above as ␛ ␍). Type "yes" to approve and run: ',
      approved: false,
    });
    expect((await ask(impact('LOW'), sql, 'YES ')).approved).toBe(true);
  });

  it('a HIGH write with hidden characters names both', async () => {
    const { question } = await ask(impact('HIGH', { exactRows: 2000 }), 'DELETE FROM t -- \u202e', 'yes');
    expect(question).toBe(
      'This statement holds 1 hidden character (shown above as ⟨U+202E⟩). This HIGH write changes 2,000 rows in 1 table(s). Type "yes" to approve and run: ',
    );
  });
});

describe('terminal texts', () => {
  it('shownStatement flags a statement under it; a plain one is unchanged', () => {
    expect(shownStatement('SELECT 1')).toEqual({ text: 'SELECT 1', hidden: [] });
    expect(shownStatement(`x${ESC}y`).text).toBe(
      'x␛y\n! HIDDEN CHARACTERS: this statement contains 1 hidden character: ESC at line 1 — shown as ␛. It runs exactly as shown here, stand-ins included.',
    );
  });

  it('a list line shows stand-ins and starts with [hidden chars]; whitespace runs (not hidden characters) become one space', () => {
    expect(shownOneLine(`DELETE FROM t\n  WHERE id = 1 -- ${ESC}[2K\r`)).toBe(
      '[hidden chars] DELETE FROM t WHERE id = 1 -- ␛[2K␍',
    );
    expect(shownOneLine('DELETE FROM t\r\n  WHERE\tid = 1')).toBe('DELETE FROM t WHERE id = 1');
  });

  it('the impact text shows names and messages from the database visibly', () => {
    const text = renderImpact(
      impact('LOW', {
        tables: [{ schema: 'public', name: `t${ESC}[2K`, via: 'direct', inserted: 0, updated: 1, deleted: 0 }],
        warnings: ['trigger \u202eevil'],
      }),
    );
    expect(text).toContain('public.t␛[2K');
    expect(text).toContain('! trigger ⟨U+202E⟩evil');
    expect(text).not.toContain(ESC);
  });

  it('the syntax caret stands under the drawn column when hidden characters precede it', () => {
    const sql = `SELECT ${ESC}x FROM`;
    expect(caretAt(sql, sql.indexOf('x'))).toBe('  SELECT ␛x FROM\n          ^');
  });

  it("job show's todo lines show a todo's SQL with its stand-ins, flagged", () => {
    const text = renderTodos({
      ok: true,
      items: [{ id: 't1', title: 'tag it', status: 'pending', sql: `UPDATE t SET tag = 'x' /*${ESC}[2K\r*/` }],
    });
    expect(text).toContain("[hidden chars] UPDATE t SET tag = 'x' /*␛[2K␍*/");
    expect(text).not.toContain(ESC);
  });
});
