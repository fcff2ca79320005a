import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import type { OpenedScratch } from '../../../support/openedScratch';
import { closeScratch, openScratch } from '../../../support/openedScratch';
import { postgresAvailable } from '../../../support/services';

const FILLER =
  'audits budgets carriers depots exports fleets grants harbours imports journals kiosks lockers meters notices offices pallets quotas routes shifts tariffs unions vessels wagons yards zones'.split(
    ' ',
  );

// A generated ORM-style schema: widgets with detail tables named after them, a plugin's look-alike tables
// (acme_*, some named after widgets) and a plain child (stock_levels), a shared attributes table every entity points at with labels that belong to it, assemblies that
// belong to a widget, and unrelated tables so that the whole schema does not fit the budget.
const SCHEMA = `
CREATE TABLE attributes (id bigint PRIMARY KEY, created_at timestamptz, description text);
CREATE TABLE labels (attribute_id bigint REFERENCES attributes (id), label text, PRIMARY KEY (attribute_id, label));
CREATE TABLE widgets (id bigint PRIMARY KEY, name text, colour text, attribute_id bigint REFERENCES attributes (id));
CREATE TABLE widget_notes (id bigint PRIMARY KEY, widget_id bigint REFERENCES widgets (id), note text);
CREATE TABLE acme_widget_links (widget_id bigint PRIMARY KEY REFERENCES widgets (id), remote text);
CREATE TABLE acme_widget_maps (widget_id bigint PRIMARY KEY REFERENCES widgets (id), remote text);
CREATE TABLE acme_widget_syncs (widget_id bigint PRIMARY KEY REFERENCES widgets (id), synced timestamptz);
CREATE TABLE acme_links (id bigint PRIMARY KEY, widget_id bigint REFERENCES widgets (id), remote text);
CREATE TABLE acme_maps (id bigint PRIMARY KEY, widget_id bigint REFERENCES widgets (id), remote text);
CREATE TABLE acme_syncs (id bigint PRIMARY KEY, widget_id bigint REFERENCES widgets (id), synced timestamptz);
CREATE TABLE stock_levels (id bigint PRIMARY KEY, widget_id bigint REFERENCES widgets (id), on_hand integer);
CREATE TABLE assemblies (id bigint PRIMARY KEY, widget_id bigint REFERENCES widgets (id), built_on date);
${FILLER.map((name, i) => `CREATE TABLE ${name} (id bigint PRIMARY KEY, ${name}_code_${i} text, region_${i} text, opened_${i} date);`).join('\n')}
`;

// The whole schema is more than twice this budget: only the ranking decides what is shown.
const BUDGET = 250;

describe.runIf(postgresAvailable)('schema linking: the tables of what the question is about', () => {
  let snapshot: SchemaSnapshot;
  let opened: OpenedScratch | undefined;

  beforeAll(async () => {
    ({ snapshot } = opened = await openScratch(SCHEMA));
  });

  afterAll(async () => {
    await closeScratch(opened);
  });

  const context = (question: string) => buildSchemaContext(snapshot, question, { budgetTokens: BUDGET });
  const names = (question: string) => context(question).tables.map((t) => t.name);

  /** `first` is shown, and above each of `others` that is shown. */
  const expectAbove = (shown: string[], first: string, others: string[]) => {
    expect(shown).toContain(first);
    for (const other of others) {
      const at = shown.indexOf(other);
      if (at >= 0) expect(shown.indexOf(first), `${first} above ${other}`).toBeLessThan(at);
    }
  };

  it('the schema is bigger than the budget (so the ranking decides what is shown)', () => {
    expect(snapshot.tables).toHaveLength(12 + FILLER.length);
    expect(context('widget').schemaTokens).toBeGreaterThan(2 * BUDGET);
  });

  it('ranks a child named after the subject above a plugin’s look-alikes that name it too', () => {
    const shown = names('Provide information about the widget with id 7.');
    expect(shown[0]).toBe('widgets');
    expectAbove(shown, 'widget_notes', ['acme_widget_links', 'acme_widget_maps', 'acme_widget_syncs']);
  });

  it('brings what belongs to the subject’s parent: the labels of its shared attributes row', () => {
    const shown = names('Provide information about the widget with id 7.');
    expect(shown).toContain('attributes');
    expect(shown).toContain('labels');
    expect(shown.some((n) => FILLER.includes(n))).toBe(false);
  });

  it('brings the detail tables of the table the subject belongs to: an assembly brings its widget’s notes', () => {
    const shown = names('Provide information about the assembly built on 2024-03-01.');
    expect(shown[0]).toBe('assemblies');
    expect(shown).toContain('widgets');
    expect(shown).toContain('widget_notes');
    expectAbove(shown, 'widget_notes', ['acme_widget_links', 'acme_widget_maps', 'acme_widget_syncs']);
  });

  it('puts a plugin’s tables (a prefix many tables share, not in the question) below the subject’s own', () => {
    const shown = names('Provide information about the widget with id 7.');
    expectAbove(shown, 'stock_levels', ['acme_links', 'acme_maps', 'acme_syncs']);
  });
});
