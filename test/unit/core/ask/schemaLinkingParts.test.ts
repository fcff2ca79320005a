import { describe, expect, it } from 'vitest';
import { FkGraph } from '../../../../src/core/ask/fkGraph';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import { compactSchemaList, describeTablesText, findTablesText } from '../../../../src/core/ask/schemaLinking';
import { baseName, tableFamilies } from '../../../../src/core/ask/tableFamilies';
import { termsOf } from '../../../../src/core/ask/tokens';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { col, fk, table } from '../../../fixtures/bigSchema';

const snapshot = (tables: SchemaSnapshot['tables']): SchemaSnapshot => ({
  database: 'test',
  serverVersion: '15',
  tables,
});

describe('table families', () => {
  it('strips numbered, dated and sharded suffixes, and leaves plain names alone', () => {
    expect(baseName('events_2024_01')).toBe('events');
    expect(baseName('crm_support_ticket_7')).toBe('crm_support_ticket');
    expect(baseName('measurement_y2006m02')).toBe('measurement');
    expect(baseName('log_shard_03')).toBe('log');
    expect(baseName('sales_p20240101')).toBe('sales');
    expect(baseName('customers')).toBeUndefined();
  });

  it('groups same-column copies under one representative, but not copies whose columns differ', () => {
    const copies = [1, 2, 3].map((i) => table(`ticket_${i}`, [col('id', 'int'), col('subject')]));
    const different = table('ticket_4', [col('id', 'int'), col('subject'), col('extra')]);
    const plain = table('ticket', [col('id', 'int'), col('subject')]);
    const families = tableFamilies([...copies, different, plain]);
    // The unsuffixed table represents the family.
    expect(families.members.get(4)?.map((i) => [...copies, different, plain][i]?.name)).toEqual([
      'ticket',
      'ticket_1',
      'ticket_2',
      'ticket_3',
    ]);
    expect(families.representative[3]).toBe(3);
  });

  it('puts partitions under their parent whatever their columns', () => {
    const parent = table('events', [col('id', 'int'), col('at', 'date')], { kind: 'partitioned_table' });
    const part = table('events_old', [col('id', 'int'), col('at', 'date')], {
      partitionOf: { schema: 'public', table: 'events' },
    });
    const families = tableFamilies([part, parent]);
    expect(families.representative[0]).toBe(1);
    expect(families.members.get(1)).toEqual([1, 0]);
  });
});

describe('FK graph', () => {
  it('finds the tables strictly between two ends on a shortest path, within the hop limit', () => {
    const graph = new FkGraph(6);
    for (const [a, b] of [
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [0, 5],
      [5, 4],
    ] as const)
      graph.addEdge(a, b);
    expect(graph.pathsFrom(0, new Set([4]), 4).get(4)).toEqual([5]);
    expect(graph.pathsFrom(0, new Set([3]), 4).get(3)).toEqual([1, 2]);
    expect(graph.pathsFrom(0, new Set([3]), 2).has(3)).toBe(false);
  });
});

describe('identifier words', () => {
  it('spells out abbreviations in identifiers only, and meets plural, irregular and -ment forms', () => {
    expect(termsOf('cust_qty_amt', 'identifier')).toEqual(termsOf('customer quantity amount'));
    expect(termsOf('cat', 'identifier')).toEqual(termsOf('cat'));
    expect(termsOf('network_rbac', 'identifier')).toEqual(termsOf('network access control'));
    // a request verb is not a word of the schema ("Provide information about …" ≠ providers)
    expect(termsOf('Provide the providers')).toEqual(termsOf('providers'));
    expect(termsOf('won')).toEqual(termsOf('win'));
    expect(termsOf('enrollment')).toEqual(termsOf('enrolled'));
    expect(termsOf('people')).toEqual(termsOf('person'));
  });

  it('links glued names, agent nouns and money columns to the words of a question', () => {
    const schema = snapshot([
      table('song', [col('id', 'int'), col('songname'), col('title')]),
      table('teacher', [col('id', 'int'), col('full_name')]),
      table('deal', [col('id', 'int'), col('net', 'numeric(12,2)')]),
      table('noise', [col('id', 'int'), col('label')]),
    ]);
    const first = (question: string) => buildSchemaContext(schema, question, { budgetTokens: 30 }).tables[0]?.name;
    expect(first('who teaches math')).toBe('teacher');
    expect(first('total revenue')).toBe('deal');
    const songs = buildSchemaContext(schema, 'song names', { budgetTokens: 6000 }).tables.find(
      (t) => t.name === 'song',
    );
    expect(songs?.score).toBeGreaterThan(
      buildSchemaContext(schema, 'song', { budgetTokens: 6000 }).tables.find((t) => t.name === 'song')?.score ??
        Infinity,
    );
  });
});

describe('two-stage linking helpers', () => {
  const schema = snapshot([
    table('customers', [col('id', 'int'), col('name')], { comment: 'People who buy' }),
    table('orders', [col('id', 'int'), col('customer_id', 'int'), col('total', 'numeric(10,2)')], {
      foreignKeys: [fk('customer_id', 'customers')],
    }),
    ...[1, 2, 3].map((i) => table(`audit_${i}`, [col('id', 'int'), col('what')])),
  ]);

  it('lists one short line per table, a family once, the likeliest first, cut to the budget', () => {
    const all = compactSchemaList(schema, 'orders per customer', 1000);
    expect(all.text.split('\n')).toEqual([
      'orders: id, customer_id, total',
      'customers -- People who buy',
      'audit_3 (+2 like it): id, what',
    ]);
    expect(all).toMatchObject({ listed: 3, total: 3 });
    const cut = compactSchemaList(schema, 'orders per customer', 10);
    expect(cut.listed).toBe(1);
  });

  it('describes tables in full and names the unknown ones; finds tables by words', () => {
    const described = describeTablesText(schema, ['orders', 'public.customers', 'nope']);
    expect(described.text).toContain('orders(id int pk, customer_id int → customers.id, total numeric(10,2))');
    expect(described.text).toContain('No table named: nope');
    expect(described.found).toEqual(['public.orders', 'public.customers']);
    expect(findTablesText(schema, 'buyers').split('\n')[0]).toBe('customers -- People who buy');
    expect(findTablesText(schema, 'zebra')).toBe('');
  });
});
