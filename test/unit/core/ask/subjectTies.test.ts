import { describe, it } from 'vitest';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import type { SchemaSnapshot, TableInfo } from '../../../../src/shared/schema';
import { col, fk, table } from '../../../fixtures/bigSchema';
import { expectAbove } from '../../../support/rankOrder';

// An ORM-style schema around widgets: a shared attributes table with labels that belong to it, depots that
// widgets sit in (with their own detail tables), a widget column `pool_id` no foreign key declares, a
// bandwidth module a core table points at, a plug-in (acme_) nothing points at, and unrelated tables.
const key = (...columns: string[]): Partial<TableInfo> => ({ primaryKey: columns });
const TABLES: TableInfo[] = [
  table('attributes', [col('id', 'bigint'), col('created_at', 'timestamptz'), col('description')]),
  table('labels', [col('attribute_id', 'bigint'), col('label')], {
    ...key('attribute_id', 'label'),
    foreignKeys: [fk('attribute_id', 'attributes')],
  }),
  table('depots', [col('id', 'bigint'), col('name'), col('attribute_id', 'bigint')], {
    foreignKeys: [fk('attribute_id', 'attributes')],
  }),
  table('depot_notes', [col('id', 'bigint'), col('depot_id', 'bigint'), col('note')], {
    foreignKeys: [fk('depot_id', 'depots')],
  }),
  table(
    'widgets',
    [
      col('id', 'bigint'),
      col('name'),
      col('depot_id', 'bigint'),
      col('attribute_id', 'bigint'),
      col('pool_id', 'bigint'),
    ],
    { foreignKeys: [fk('depot_id', 'depots'), fk('attribute_id', 'attributes')] },
  ),
  table('widget_dns', [col('widget_id', 'bigint'), col('dns_name')], {
    ...key('widget_id'),
    foreignKeys: [fk('widget_id', 'widgets')],
  }),
  table('dhcp_options', [col('id', 'bigint'), col('widget_id', 'bigint'), col('opt_name'), col('opt_value')], {
    foreignKeys: [fk('widget_id', 'widgets')],
  }),
  table('pools', [col('id', 'bigint'), col('cidr'), col('shared', 'boolean')]),
  table('pool_prefixes', [col('pool_id', 'bigint'), col('prefix')], {
    ...key('pool_id', 'prefix'),
    foreignKeys: [fk('pool_id', 'pools')],
  }),
  table('bandwidth_policies', [col('id', 'bigint'), col('title')]),
  table('bandwidth_rules', [col('id', 'bigint'), col('policy_id', 'bigint'), col('max_kbps', 'integer')], {
    foreignKeys: [fk('policy_id', 'bandwidth_policies')],
  }),
  table('bandwidth_widget_bindings', [col('policy_id', 'bigint'), col('widget_id', 'bigint')], {
    primaryKey: null,
    foreignKeys: [fk('policy_id', 'bandwidth_policies'), fk('widget_id', 'widgets')],
  }),
  table('policygrants', [col('id', 'bigint'), col('policy_id', 'bigint'), col('grantee')], {
    foreignKeys: [fk('policy_id', 'bandwidth_policies')],
  }),
  table('acme_widget_maps', [col('widget_id', 'bigint'), col('remote')], {
    ...key('widget_id'),
    foreignKeys: [fk('widget_id', 'widgets')],
  }),
  table('acme_widget_syncs', [col('widget_id', 'bigint'), col('synced', 'timestamptz')], {
    ...key('widget_id'),
    foreignKeys: [fk('widget_id', 'widgets')],
  }),
  table('acme_hosts', [col('id', 'bigint'), col('address')]),
  ...'audits budgets carriers exports fleets grants harbours imports journals kiosks lockers meters'
    .split(' ')
    .map((name, i) => table(name, [col('id', 'bigint'), col(`${name}_code_${i}`), col(`region_${i}`)])),
];
const snapshot: SchemaSnapshot = { database: 'x', serverVersion: '15.0', tables: TABLES };

const ranked = (question: string) =>
  buildSchemaContext(snapshot, question, { budgetTokens: 6000 }).tables.map((t) => t.name);

describe('the tables of what a question is about', () => {
  const question = 'Provide information about the widget w-7 under depot 5.';

  it('takes the tables of the subject it names first, not of the one that only says which ("under depot 5")', () => {
    expectAbove(ranked(question), ['widget_dns', 'bandwidth_widget_bindings', 'pools'], ['depot_notes']);
  });

  it('follows a reference of the subject that no foreign key declares, in a schema that declares others', () => {
    expectAbove(ranked(question), ['pools', 'pool_prefixes'], ['acme_widget_maps', 'acme_widget_syncs']);
  });

  it('treats a prefix a core table points at as part of the application, not as a plug-in', () => {
    expectAbove(ranked(question), ['bandwidth_widget_bindings'], ['dhcp_options']);
  });

  it('ranks a table the question reaches only through the subject’s name by its tie to the subject', () => {
    expectAbove(ranked(question), ['dhcp_options'], ['acme_widget_maps', 'acme_widget_syncs']);
  });

  it('puts the subject’s own tables before those two ties away, what belongs to its parent first', () => {
    const shown = ranked('Provide information about the widget w-7.');
    expectAbove(shown, ['dhcp_options'], ['depot_notes']);
    expectAbove(shown, ['labels'], ['bandwidth_policies', 'depot_notes']);
  });
});
