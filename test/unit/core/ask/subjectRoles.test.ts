import { describe, it } from 'vitest';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import type { SchemaSnapshot, TableInfo } from '../../../../src/shared/schema';
import { col, fk, table } from '../../../fixtures/bigSchema';
import { expectAbove } from '../../../support/rankOrder';

// An ORM-style schema around gadgets, generated here: a base table of shared attributes that every resource
// (gadgets, depots, routes) points at, with labels that belong to its rows; depots that gadgets sit in, with
// bays; the gadget's detail tables of each shape (one named after it, a list tied to it alone, a link to a
// gateway, slots placed in its depot, coupons used elsewhere, an association with zones); a plug-in (acme_) nothing points at; and unrelated tables.
const key = (...columns: string[]): Partial<TableInfo> => ({ primaryKey: columns });
const FILLER = 'audits budgets carriers exports fleets grants harbours imports journals kiosks lockers meters';

function gadgetTables(schema = 'public', extra: string[] = []): TableInfo[] {
  const ref = (column: string, target: string) => fk(column, target, 'id', schema);
  const t = (name: string, columns: ReturnType<typeof col>[], more: Partial<TableInfo> = {}) => ({
    ...table(name, columns, more),
    schema,
  });
  return [
    t('attributes', [col('id', 'bigint'), col('created_at', 'timestamptz'), col('description')]),
    t('labels', [col('attribute_id', 'bigint'), col('label')], {
      ...key('attribute_id', 'label'),
      foreignKeys: [ref('attribute_id', 'attributes')],
    }),
    t('depots', [col('id', 'bigint'), col('name'), col('attribute_id', 'bigint')], {
      foreignKeys: [ref('attribute_id', 'attributes')],
    }),
    t('depot_notes', [col('id', 'bigint'), col('depot_id', 'bigint'), col('note')], {
      foreignKeys: [ref('depot_id', 'depots')],
    }),
    t('bays', [col('id', 'bigint'), col('depot_id', 'bigint'), col('width', 'integer')], {
      foreignKeys: [ref('depot_id', 'depots')],
    }),
    t(
      'gadgets',
      [
        col('id', 'bigint'),
        col('name'),
        col('depot_id', 'bigint'),
        col('attribute_id', 'bigint'),
        ...extra.map((c) => col(c)),
      ],
      { foreignKeys: [ref('depot_id', 'depots'), ref('attribute_id', 'attributes')] },
    ),
    t('gadget_dns', [col('gadget_id', 'bigint'), col('dns_name')], {
      ...key('gadget_id'),
      foreignKeys: [ref('gadget_id', 'gadgets')],
    }),
    t('dhcp_options', [col('id', 'bigint'), col('gadget_id', 'bigint'), col('opt_name'), col('opt_value')], {
      foreignKeys: [ref('gadget_id', 'gadgets')],
    }),
    t('gateways', [col('id', 'bigint'), col('title')]),
    t('gateway_links', [col('gadget_id', 'bigint'), col('gateway_id', 'bigint'), col('mode')], {
      ...key('gadget_id'),
      foreignKeys: [ref('gadget_id', 'gadgets'), ref('gateway_id', 'gateways')],
    }),
    t(
      'slot_assignments',
      [col('gadget_id', 'bigint'), col('depot_id', 'bigint'), col('bay_id', 'bigint'), col('slot')],
      {
        ...key('depot_id', 'bay_id', 'slot'),
        foreignKeys: [ref('gadget_id', 'gadgets'), ref('depot_id', 'depots'), ref('bay_id', 'bays')],
      },
    ),
    t('coupons', [col('id', 'bigint'), col('gadget_id', 'bigint'), col('code')], {
      foreignKeys: [ref('gadget_id', 'gadgets')],
    }),
    t('coupon_uses', [col('id', 'bigint'), col('coupon_id', 'bigint'), col('used_at', 'timestamptz')], {
      foreignKeys: [ref('coupon_id', 'coupons')],
    }),
    t('zones', [col('id', 'bigint'), col('title')]),
    t('zone_bindings', [col('gadget_id', 'bigint'), col('zone_id', 'bigint')], {
      primaryKey: null,
      foreignKeys: [ref('gadget_id', 'gadgets'), ref('zone_id', 'zones')],
    }),
    t('depot_flags', [col('depot_id', 'bigint'), col('flag')], {
      ...key('depot_id'),
      foreignKeys: [ref('depot_id', 'depots')],
    }),
    t('routes', [col('id', 'bigint'), col('title'), col('attribute_id', 'bigint')], {
      foreignKeys: [ref('attribute_id', 'attributes')],
    }),
    t('route_hops', [col('id', 'bigint'), col('route_id', 'bigint'), col('hop', 'integer')], {
      foreignKeys: [ref('route_id', 'routes')],
    }),
    t('acme_devices', [col('id', 'bigint'), col('device_id'), col('gadget_id', 'bigint')], {
      foreignKeys: [ref('gadget_id', 'gadgets')],
    }),
    t('acme_maps', [col('id', 'bigint'), col('remote')]),
    t('acme_syncs', [col('id', 'bigint'), col('synced', 'timestamptz')]),
    ...FILLER.split(' ').map((name, i) => t(name, [col('id', 'bigint'), col(`${name}_code_${i}`), col(`region_${i}`)])),
  ];
}

const snapshotOf = (tables: TableInfo[]): SchemaSnapshot => ({ database: 'x', serverVersion: '15.0', tables });
const gadgets = snapshotOf(gadgetTables());

/** Two databases side by side, each with gadgets of its own: a question about gadgets does not say which. */
function twoDatabases(): SchemaSnapshot {
  const west = (name: string, columns: ReturnType<typeof col>[], more: Partial<TableInfo> = {}) => ({
    ...table(name, columns, more),
    schema: 'west',
  });
  return snapshotOf([
    ...gadgetTables('east'),
    west('gadgets', [col('id', 'bigint'), col('colour'), col('owner_id', 'bigint')]),
    west('gadget_ports', [col('gadget_id', 'bigint'), col('port', 'integer')], {
      ...key('gadget_id'),
      foreignKeys: [fk('gadget_id', 'gadgets', 'id', 'west')],
    }),
    west('owners', [col('id', 'bigint'), col('full_name')]),
  ]);
}

const ranked = (snapshot: SchemaSnapshot, question: string) =>
  buildSchemaContext(snapshot, question, { budgetTokens: 6000 }).tables.map((t) =>
    t.schema === 'public' ? t.name : `${t.schema}.${t.name}`,
  );

describe('the subject’s tables by their role in the schema', () => {
  const question = 'Provide information about the gadget g-7.';

  it('takes the base table every resource points at as the subject’s own row, and what belongs to it', () => {
    expectAbove(ranked(gadgets, question), ['attributes', 'labels'], ['depots', 'bays', 'depot_notes']);
  });

  it('takes a list tied to the subject alone as its own, above a table keyed by it that ties it to another', () => {
    expectAbove(ranked(gadgets, question), ['dhcp_options'], ['gateway_links', 'gateways']);
  });

  it('takes a detail that places the subject in its parent (its depot’s bays) as its own', () => {
    expectAbove(ranked(gadgets, question), ['slot_assignments'], ['gateway_links', 'bays']);
  });

  it('takes a child other tables point at as an entity of its own, not as the subject’s detail', () => {
    expectAbove(ranked(gadgets, question), ['dhcp_options', 'slot_assignments'], ['coupons']);
  });

  it('brings the other end of an association before what belongs to the tables the subject points at', () => {
    expectAbove(ranked(gadgets, question), ['zone_bindings', 'zones'], ['depot_flags', 'depot_notes']);
  });

  it('puts the subject’s own tables before the tables it points at', () => {
    expectAbove(ranked(gadgets, question), ['dhcp_options', 'slot_assignments'], ['depots']);
  });

  it('gives a plug-in’s table the question does not name half of what its neighbours give it', () => {
    const shown = ranked(gadgets, 'Provide information about the gadget with device id 9.');
    expectAbove(shown, ['gadget_dns', 'attributes'], ['acme_devices']);
  });

  it('takes the subject from outside an aside: "(including depots)" names what to add', () => {
    const shown = ranked(gadgets, 'Provide information (including depots) for these gadgets g-1, g-2.');
    expectAbove(shown, ['gadget_dns', 'dhcp_options'], ['depot_notes', 'bays']);
  });

  it('lifts the tables of the same subject in each schema the question may mean', () => {
    const shown = ranked(twoDatabases(), 'Provide information about the gadgets.');
    expectAbove(
      shown,
      ['west.gadget_ports', 'west.owners', 'east.gadget_dns'],
      ['east.depot_notes', 'east.acme_devices'],
    );
  });
});
