// The linking index stored with the schema cache: a stored and loaded index is the built one (deep equality, so a
// field added to the index and not stored fails here), and the context ranked over it is the same, to the text.
import { describe, expect, it } from 'vitest';
import {
  decodeLinkIndex,
  encodeLinkIndex,
  entrySchemas,
  fillGroupTables,
} from '../../../../src/core/ask/linkIndexCodec';
import type { StoredLinkIndex } from '../../../../src/core/ask/linkIndexCodec';
import { indexOf } from '../../../../src/core/ask/linking/schemaIndex';
import type { SchemaIndex } from '../../../../src/core/ask/linking/schemaIndex';
import { buildSchemaContext, schemaContextFromIndex, schemaTokensOf } from '../../../../src/core/ask/schemaContext';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { bigSnapshot, col, fk, table } from '../../../fixtures/bigSchema';
import { tenantSnapshot } from '../../../fixtures/tenantSchema';

/** The snapshot's index stored (through JSON, as the cache keeps it) and loaded again, every group table filled. */
function roundTrip(snapshot: SchemaSnapshot, fill: boolean): { built: SchemaIndex; loaded: SchemaIndex } {
  const built = indexOf(snapshot);
  schemaTokensOf(built);
  const stored = JSON.parse(JSON.stringify(encodeLinkIndex(built))) as StoredLinkIndex;
  const loaded = decodeLinkIndex(stored, (schema, name) =>
    snapshot.tables.find((t) => t.schema === schema && t.name === name),
  );
  if (!loaded) throw new Error('not loaded');
  if (fill) {
    for (const schema of new Set(snapshot.tables.map((t) => t.schema)))
      fillGroupTables(
        loaded,
        schema,
        snapshot.tables.filter((t) => t.schema === schema),
      );
  }
  return { built, loaded };
}

/** A tenant estate with a shared public schema the tenants point into (groups, cross-schema keys, plain tables). */
function mixedSnapshot(): SchemaSnapshot {
  const tenants = tenantSnapshot(4, 12).tables.map((t) =>
    t.name === 't_1' ? { ...t, foreignKeys: [fk('parent_id', 'plans', 'id', 'public')] } : t,
  );
  const plans = table('plans', [col('id', 'bigint'), col('plan_name'), col('monthly_price', 'numeric(10,2)')]);
  const invoices = table('billing_invoices', [col('id', 'bigint'), col('plan_id', 'bigint'), col('due_at', 'date')], {
    foreignKeys: [fk('plan_id', 'plans', 'id')],
  });
  return { database: 'mixed', serverVersion: '15.0', tables: [plans, invoices, ...tenants] };
}

const CASES: [string, () => SchemaSnapshot, string[]][] = [
  ['a schema per tenant', () => tenantSnapshot(6, 40), ['amount per status for tenant 3', 'f7 code of t_7', 'flag']],
  ['2,000 look-alike tables', bigSnapshot, ['customers with the most invoices', 'tracks per genre', 'import']],
  ['tenants pointing into public', mixedSnapshot, ['plan price of tenant 2 t_1', 'invoices due per plan', 'status']],
];

describe('the linking index stored with the schema cache', () => {
  it.each(CASES)('loads as it was built: %s', (_, make) => {
    const { built, loaded } = roundTrip(make(), true);
    const strip = (index: SchemaIndex) => ({
      ...index,
      entries: index.entries.map(({ fullBlock: _block, ...entry }) => entry),
    });
    expect(strip(loaded)).toEqual(strip(built));
  });

  it.each(CASES)(
    'ranks the same over a loaded index, to the text: %s',
    async (_, make, questions) => {
      const snapshot = make();
      for (const question of questions) {
        for (const budgetTokens of [300, 6000]) {
          const { loaded } = roundTrip(snapshot, false);
          const expected = buildSchemaContext(snapshot, question, { budgetTokens });
          const filled = new Set<string>();
          const got = await schemaContextFromIndex(loaded, question, { budgetTokens }, async (ranked) => {
            for (const c of ranked) {
              if (!c.schema || c.schema === c.entry.table.schema || filled.has(c.schema)) continue;
              filled.add(c.schema);
              fillGroupTables(
                loaded,
                c.schema,
                snapshot.tables.filter((t) => t.schema === c.schema),
              );
            }
            await Promise.resolve();
          });
          expect(got).toEqual(expected);
        }
      }
      // Six rankings of 2,000 tables: a few seconds on a busy machine, more than a unit test's default 5 s.
    },
    60_000,
  );

  it('needs the tables of one schema per tenant group only', () => {
    const snapshot = tenantSnapshot(20, 30);
    const stored = encodeLinkIndex(indexOf(snapshot));
    expect(entrySchemas(stored)).toEqual(['tenant_1']);
  });

  it('is not loaded when a table it names is gone, or when it is of another format', () => {
    const snapshot = tenantSnapshot(3, 5);
    const stored = encodeLinkIndex(indexOf(snapshot));
    expect(decodeLinkIndex(stored, () => undefined)).toBeUndefined();
    expect(decodeLinkIndex({ ...stored, format: 0 as unknown as 2 }, () => snapshot.tables[0])).toBeUndefined();
  });
});
