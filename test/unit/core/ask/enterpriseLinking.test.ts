import { describe, expect, it } from 'vitest';
import { gluedSplitter } from '../../../../src/core/ask/linking/gluedWords';
import { numberedKeys } from '../../../../src/core/ask/linking/numberedNames';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import { contextJson } from '../../../../src/core/present/outputJson';
import type { SchemaSnapshot, TableInfo } from '../../../../src/shared/schema';
import { bigSnapshot, col, fk, table } from '../../../fixtures/bigSchema';
import { tenantSnapshot, tenantTables } from '../../../fixtures/tenantSchema';

const snapshot = (tables: TableInfo[]): SchemaSnapshot => ({ database: 'x', serverVersion: '15.0', tables });
const keys = (context: { tables: { schema: string; name: string }[] }) =>
  context.tables.map((t) => `${t.schema}.${t.name}`);

/** Generic tables that match nothing a test asks, so that the whole schema never fits the budget. */
function noise(count: number, schema = 'public'): TableInfo[] {
  return Array.from({ length: count }, (_, i) =>
    table(`misc_${i}_record`, [col('id', 'bigint'), col(`payload_${i}`), col(`kind_${i}`), col('created_at')], {
      schema,
    }),
  );
}

describe('identifiers and numbers named in a question', () => {
  it('finds tenant_7.t_12 first for "tenant 7 … table t_12" among 50 tenant schemas, shown in tenant_7', () => {
    const tenants = tenantSnapshot(50, 100);
    const context = buildSchemaContext(tenants, 'total amount per status for tenant 7 in table t_12', {
      budgetTokens: 2000,
    });
    const [first] = context.tables;
    expect(`${first?.schema}.${first?.name}`).toBe('tenant_7.t_12');
    expect(first?.schemas).toHaveLength(50);
    expect(first?.schemas?.[0]).toBe('tenant_7');
    expect(context.text.split('\n')[0]).toMatch(/^tenant_7\.t_12\(id bigint pk, t_11_id bigint → tenant_7\.t_11\.id/);
    expect(context.text).toContain('the same table in 50 schemas: tenant_7, tenant_1');
    // the same question in other words and spellings
    for (const question of ['amount by status in tenant_7.t12', 'statuses of t_012 for tenants 7']) {
      const again = buildSchemaContext(tenants, question, { budgetTokens: 2000 });
      expect(keys(again)[0]).toBe('tenant_7.t_12');
    }
  });

  it('ranks module 17’s audit trail first for "show the audit trail for module 17" on the 2,000-table schema', () => {
    const big = bigSnapshot();
    const wanted = big.tables.filter((t) => /^module_17_audit_trail_\d+$/.test(t.name)).map((t) => t.name);
    expect(wanted).toHaveLength(1);
    const context = buildSchemaContext(big, 'show the audit trail for module 17', { budgetTokens: 2000 });
    expect(context.tables[0]?.name).toBe(wanted[0]);
    // other modules' audit trails still come, after it
    expect(context.tables.slice(1).some((t) => /^module_\d+_audit_trail_/.test(t.name))).toBe(true);
  });

  it('reads word–number pairs the way names spell them', () => {
    expect(numberedKeys('tenant_7')).toEqual(['tenant 7']);
    expect(numberedKeys('for tenants 7 in t12')).toEqual(['tenant 7', 't 12']);
    expect(numberedKeys('module_017_audit_trail_9')).toEqual(['module 17', 'trail 9']);
  });
});

describe('join paths', () => {
  it('adds the bridge table a join between two matched tables needs, though no word of the question names it', () => {
    const tables = [
      table('students', [col('id', 'bigint'), col('full_name'), col('email')]),
      table('courses', [col('id', 'bigint'), col('title'), col('credits', 'integer')]),
      table('enrollments', [col('id', 'bigint'), col('student_id', 'bigint'), col('course_id', 'bigint')], {
        foreignKeys: [fk('student_id', 'students'), fk('course_id', 'courses')],
      }),
      ...noise(300),
    ];
    const context = buildSchemaContext(snapshot(tables), 'which students take which courses', { budgetTokens: 600 });
    expect(context.schemaTokens).toBeGreaterThan(context.budget);
    expect(keys(context).slice(0, 3).sort()).toEqual(['public.courses', 'public.enrollments', 'public.students']);
  });

  it('infers joins in a schema that declares no foreign keys, and says they are inferred', () => {
    const tables = [
      table(
        'fact_sales',
        [
          col('sale_id', 'bigint'),
          col('customer_id', 'bigint'),
          col('product_id', 'bigint'),
          col('amount', 'numeric(12,2)'),
        ],
        { schema: 'dw', primaryKey: ['sale_id'] },
      ),
      table('customers', [col('id', 'bigint'), col('full_name'), col('region')], { schema: 'dw' }),
      table('products', [col('id', 'bigint'), col('title'), col('brand')], { schema: 'dw' }),
      ...noise(300, 'dw'),
    ];
    const question = 'which brand does each region buy most';
    const context = buildSchemaContext(snapshot(tables), question, { budgetTokens: 600 });
    expect(context.schemaTokens).toBeGreaterThan(context.budget);
    // region (customers) and brand (products) are joined only through fact_sales, by inferred joins
    expect(keys(context).slice(0, 3).sort()).toEqual(['dw.customers', 'dw.fact_sales', 'dw.products']);
    expect(context.text).toContain('customer_id bigint → dw.customers.id (inferred)');
    expect(context.text).toContain('product_id bigint → dw.products.id (inferred)');
  });

  it('infers the x_id joins a schema that declares some foreign keys leaves out, never over a declared one', () => {
    const declared = [
      table(
        'orders',
        [col('id', 'bigint'), col('customer_id', 'bigint'), col('coupon_id', 'bigint'), col('store_key', 'bigint')],
        { foreignKeys: [fk('customer_id', 'customers')] },
      ),
      table('customers', [col('id', 'bigint'), col('full_name')]),
      table('coupons', [col('id', 'bigint'), col('code')]),
      table('stores', [col('store_key', 'bigint'), col('city')], { primaryKey: ['store_key'] }),
    ];
    const text = buildSchemaContext(snapshot(declared), 'orders and coupons', { budgetTokens: 2000 }).text;
    expect(text).toContain('customer_id bigint → customers.id, ');
    expect(text).toContain('coupon_id bigint → coupons.id (inferred)');
    // a key's name shared by two tables is a join only where a schema declares no joins at all
    expect(text).not.toContain('store_key bigint → stores.store_key');
  });

  it('ranks by the joins a schema declares: a guessed x_id join beside them is shown, not followed', () => {
    const tables = [
      table('authors', [col('id', 'bigint'), col('pen_name'), col('agency_id', 'bigint')]),
      table('agencies', [col('id', 'bigint'), col('city')]),
      table('books', [col('id', 'bigint'), col('author_id', 'bigint'), col('isbn')], {
        foreignKeys: [fk('author_id', 'authors')],
      }),
      ...noise(300),
    ];
    const context = buildSchemaContext(snapshot(tables), 'every pen name', { budgetTokens: 600 });
    expect(context.schemaTokens).toBeGreaterThan(context.budget);
    expect(keys(context).slice(0, 2)).toEqual(['public.authors', 'public.books']);
    expect(keys(context)).not.toContain('public.agencies');
    expect(context.text).toContain('agency_id bigint → agencies.id (inferred)');
  });

  it('infers nothing across types that cannot join', () => {
    const mistyped = [
      table('visits', [col('id', 'bigint'), col('page_id', 'text')]),
      table('pages', [col('id', 'bigint'), col('url')]),
    ];
    expect(buildSchemaContext(snapshot(mistyped), 'visits per page', { budgetTokens: 2000 }).text).not.toContain(
      '(inferred)',
    );
  });
});

describe('the tables of what the question is about', () => {
  const widgetTables = (schema: string, declared: boolean) => {
    const fks = (...pairs: [string, string][]) =>
      declared ? { foreignKeys: pairs.map(([c, t]) => fk(c, t, 'id', schema)) } : {};
    return [
      table('widgets', [col('id', 'bigint'), col('colour'), col('maker_id', 'bigint')], {
        schema,
        ...fks(['maker_id', 'makers']),
      }),
      table('makers', [col('id', 'bigint'), col('maker_name')], { schema }),
      table('stations', [col('id', 'bigint'), col('city')], { schema }),
      table('tunings', [col('widget_id', 'bigint'), col('mode')], {
        schema,
        primaryKey: ['widget_id'],
        ...fks(['widget_id', 'widgets']),
      }),
      table('dockings', [col('widget_id', 'bigint'), col('station_id', 'bigint'), col('slot', 'integer')], {
        schema,
        primaryKey: ['widget_id', 'station_id'],
        ...fks(['widget_id', 'widgets'], ['station_id', 'stations']),
      }),
      table('assemblies', [col('id', 'bigint'), col('widget_id', 'bigint'), col('built_on', 'date')], {
        schema,
        ...fks(['widget_id', 'widgets']),
      }),
      table('widget_notes', [col('id', 'bigint'), col('widget_id', 'bigint'), col('note')], {
        schema,
        ...fks(['widget_id', 'widgets']),
      }),
      ...noise(200, schema),
    ];
  };

  it('lifts an extension of the subject above a table whose key ties the subject to another table', () => {
    const shown = keys(
      buildSchemaContext(
        snapshot(widgetTables('public', true)),
        'Provide information about the widget made by maker 7.',
        {
          budgetTokens: 300,
        },
      ),
    );
    expect(shown.slice(0, 2).sort()).toEqual(['public.makers', 'public.widgets']);
    // tunings (keyed by its widget) is the widget's own; dockings (keyed by widget and station) relates it to a station
    expect(shown).toContain('public.dockings');
    expect(shown.indexOf('public.tunings')).toBeLessThan(shown.indexOf('public.dockings'));
  });

  it('follows inferred joins from the subject where the schema declares none: an assembly brings its widget’s notes', () => {
    const context = buildSchemaContext(
      snapshot(widgetTables('dw', false)),
      'Provide information about the assembly built on 2024-03-01.',
      { budgetTokens: 300 },
    );
    const shown = keys(context);
    expect(shown[0]).toBe('dw.assemblies');
    expect(shown).toContain('dw.widgets');
    expect(shown).toContain('dw.widget_notes');
    expect(context.text).toContain('widget_id bigint → dw.widgets.id (inferred)');
  });
});

describe('tables of the same shape in many schemas', () => {
  it('shows identical tenant schemas once, each table with the schemas that share it', () => {
    const context = buildSchemaContext(tenantSnapshot(3, 5), 'amount per status', { budgetTokens: 6000 });
    expect(context.tables).toHaveLength(5);
    for (const t of context.tables) expect(t.schemas).toEqual(['tenant_1', 'tenant_2', 'tenant_3']);
    expect(context.text).toContain('-- the same table in 3 schemas: tenant_1, tenant_2, tenant_3');
    expect(contextJson(context).tables[0]).toEqual(
      expect.objectContaining({ schema: 'tenant_1', schemas: ['tenant_1', 'tenant_2', 'tenant_3'] }),
    );
  });

  it('keeps a tenant whose table differs apart for that table, and a lone look-alike in two schemas apart', () => {
    const tables = tenantSnapshot(3, 3).tables.map((t) =>
      t.schema === 'tenant_3' && t.name === 't_2' ? { ...t, columns: [...t.columns, col('extra')] } : t,
    );
    const context = buildSchemaContext(snapshot(tables), 'amount per status', { budgetTokens: 6000 });
    const t2 = context.tables.filter((t) => t.name === 't_2');
    expect(t2.map((t) => t.schemas)).toEqual(expect.arrayContaining([['tenant_1', 'tenant_2'], undefined]));
    const lookAlike = [
      ...tenantTables('billing', 1).map((t) => ({ ...t, name: 'notes' })),
      ...tenantTables('crm', 1).map((t) => ({ ...t, name: 'notes' })),
    ];
    const apart = buildSchemaContext(snapshot(lookAlike), 'notes', { budgetTokens: 6000 });
    expect(keys(apart).sort()).toEqual(['billing.notes', 'crm.notes']);
  });
});

describe('words as schemas spell them', () => {
  it('reads a known abbreviation glued to a word of the schema: networkrbacs → network, access control', () => {
    const tables = [
      table('networks', [col('id', 'bigint'), col('network_name'), col('status')]),
      table('networkrbacs', [col('id', 'bigint'), col('object_id', 'bigint'), col('target_tenant')], {
        foreignKeys: [fk('object_id', 'networks')],
      }),
      table('networkqueues', [col('id', 'bigint'), col('network_id', 'bigint'), col('queue_size', 'integer')], {
        foreignKeys: [fk('network_id', 'networks')],
      }),
      ...noise(200),
    ];
    const first = (question: string) => keys(buildSchemaContext(snapshot(tables), question, { budgetTokens: 500 }))[0];
    expect(first('list the access control entries')).toBe('public.networkrbacs');
  });

  it('cuts glued names into the words the schema spells apart elsewhere, and leaves words alone', () => {
    const split = gluedSplitter(new Set(['port', 'dns', 'security', 'group', 'binding', 'subnet', 'pool']));
    expect(split('portdnses')).toEqual(['port', 'dns']);
    expect(split('securitygroupportbindings')).toEqual(['security', 'group', 'port', 'binding']);
    expect(split('subnets')).toBeUndefined();
    expect(split('airline')).toBeUndefined();
  });

  it('finds a glued table by its words, and folds prefixed copies (shadow_…) into the table they copy', () => {
    const columns = [col('id', 'bigint'), col('port_id', 'bigint'), col('dns_name')];
    const tables = [
      table('ports', [col('id', 'bigint'), col('mac_address')]),
      table('portdnses', columns, { foreignKeys: [fk('port_id', 'ports')] }),
      table('shadow_portdnses', columns),
      ...noise(200),
    ];
    const context = buildSchemaContext(snapshot(tables), 'dns names of each port', { budgetTokens: 600 });
    expect(keys(context).slice(0, 2).sort()).toEqual(['public.portdnses', 'public.ports']);
    expect(context.tables.find((t) => t.name === 'portdnses')?.members).toEqual(['portdnses', 'shadow_portdnses']);
    expect(keys(context)).not.toContain('public.shadow_portdnses');
    // a prefix that is a word of its own makes another table, even with the same columns
    const orders = [table('orders', columns), table('purchase_orders', columns)];
    expect(buildSchemaContext(snapshot(orders), 'orders', { budgetTokens: 600 }).tables).toHaveLength(2);
  });
});
