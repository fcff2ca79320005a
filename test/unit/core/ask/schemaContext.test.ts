import { describe, expect, it } from 'vitest';
import { buildSchemaContext } from '../../../../src/core/ask/schemaContext';
import { estimateTokens, termsOf } from '../../../../src/core/ask/tokens';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { bigSnapshot, col, domainTables, table } from '../../../fixtures/bigSchema';

const big = bigSnapshot();
const names = (context: { tables: { name: string }[] }): string[] => context.tables.map((t) => t.name);

describe('terms of identifiers and questions', () => {
  it('splits camelCase and snake_case the same way, stems plurals and folds synonyms', () => {
    expect(termsOf('orderItems')).toEqual(termsOf('order_items'));
    expect(termsOf('OrderItems')).toEqual(termsOf('order items'));
    expect(termsOf('customers')).toEqual(termsOf('client'));
    expect(termsOf('categories')).toEqual(termsOf('category'));
    expect(termsOf('which products are out of stock')).toEqual(termsOf('product stock'));
    expect(termsOf('created_at', 'identifier')).toContain(termsOf('month')[0]);
  });
});

describe('buildSchemaContext on a 2,000-table schema', () => {
  it('has 2,000 tables and 40,000-odd columns', () => {
    expect(big.tables).toHaveLength(2000);
    expect(big.tables.reduce((n, t) => n + t.columns.length, 0)).toBeGreaterThan(39_000);
  });

  it('puts customers and orders, with their FK link, in a 2,000-token context for a spending question', () => {
    const context = buildSchemaContext(big, 'how much did each customer spend last month', { budgetTokens: 2000 });
    expect(names(context).slice(0, 2).sort()).toEqual(['customers', 'orders']);
    expect(context.tokens).toBeLessThanOrEqual(2000);
    expect(context.text).toContain('customer_id bigint → customers.id');
    const orders = context.tables.find((t) => t.name === 'orders');
    expect(orders?.columns).toEqual(expect.arrayContaining(['id', 'customer_id', 'total', 'created_at']));
  });

  it('finds products and the stock table for an out-of-stock question', () => {
    const context = buildSchemaContext(big, 'which products are out of stock?', { budgetTokens: 2000 });
    expect(names(context).slice(0, 2).sort()).toEqual(['inventory', 'products']);
  });

  it('matches camelCase words in the question to snake_case tables', () => {
    const context = buildSchemaContext(big, 'count orderItems per product', { budgetTokens: 2000 });
    expect(names(context)[0]).toBe('order_items');
    expect(names(context)).toContain('products');
  });

  it('ranks a table whose only match is its comment', () => {
    const context = buildSchemaContext(big, 'refunds this year', { budgetTokens: 2000 });
    expect(names(context)[0]).toBe('ledger_entries');
  });

  it('brings FK neighbours along so the question can be answered with a join', () => {
    const context = buildSchemaContext(big, 'salary by department', { budgetTokens: 2000 });
    expect(names(context).slice(0, 2).sort()).toEqual(['departments', 'salaries']);
    // employees matches nothing in the question; it is the table that links the two.
    expect(names(context)).toContain('employees');
  });

  it('uses sample values when given, below every other kind of match', () => {
    const samples = new Map([['public.orders.status', ['shipped', 'cancelled', 'refunded']]]);
    const without = buildSchemaContext(big, 'cancelled', { budgetTokens: 2000 });
    const withSamples = buildSchemaContext(big, 'cancelled', { budgetTokens: 2000, sampleValues: samples });
    expect(names(without)).not.toContain('orders');
    expect(names(withSamples)[0]).toBe('orders');
    // The same, from the samples the introspection attached to the snapshot's columns.
    const sampledSnapshot: SchemaSnapshot = {
      ...big,
      tables: big.tables.map((t) =>
        t.name === 'orders'
          ? {
              ...t,
              columns: t.columns.map((c) => (c.name === 'status' ? { ...c, samples: ['shipped', 'cancelled'] } : c)),
            }
          : t,
      ),
    };
    const fromColumns = buildSchemaContext(sampledSnapshot, 'cancelled', { budgetTokens: 2000 });
    expect(names(fromColumns)[0]).toBe('orders');
    expect(fromColumns.text).not.toContain('shipped');
  });

  it('never exceeds the budget, and the whole schema costs far more than the context', () => {
    for (const budget of [1, 20, 100, 500, 2000, 6000]) {
      for (const question of [
        'customers and their orders',
        'audit trail sync state',
        'module config import',
        'employees',
      ]) {
        const context = buildSchemaContext(big, question, { budgetTokens: budget });
        expect(context.tokens).toBeLessThanOrEqual(budget);
        expect(context.tokens).toBe(estimateTokens(context.text));
        expect(context.budget).toBe(budget);
      }
    }
    const context = buildSchemaContext(big, 'customers and their orders', { budgetTokens: 6000 });
    expect(context.schemaTokens).toBeGreaterThan(50 * context.tokens);
  });

  it('includes a table wider than the budget with only its key and matched columns', () => {
    const wide = table('telemetry', [
      col('id', 'bigint'),
      ...Array.from({ length: 300 }, (_, i) => col(`sensor_${i}_reading`, 'double precision')),
      col('battery_voltage', 'real'),
    ]);
    const snapshot: SchemaSnapshot = { ...big, tables: [...big.tables, wide] };
    const context = buildSchemaContext(snapshot, 'telemetry battery voltage', { budgetTokens: 200 });
    expect(context.tables[0]).toMatchObject({ name: 'telemetry', columns: ['id', 'battery_voltage'] });
    expect(context.text).toContain('telemetry(id bigint pk, battery_voltage real, … 300 more columns)');
    expect(context.tokens).toBeLessThanOrEqual(200);
  });

  it('gives the same answer every time', () => {
    const a = buildSchemaContext(big, 'module audit trail status', { budgetTokens: 3000 });
    const b = buildSchemaContext({ ...big, tables: [...big.tables] }, 'module audit trail status', {
      budgetTokens: 3000,
    });
    expect(b).toEqual(a);
    expect(a.tables.length).toBeGreaterThan(5);
    const scores = a.tables.map((t) => t.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
  });
});

describe('buildSchemaContext on a small schema', () => {
  const small: SchemaSnapshot = { database: 'shop', serverVersion: '16.4', tables: domainTables() };

  it('gives every table when the whole schema fits, relevant ones first', () => {
    const context = buildSchemaContext(small, 'employees hired this year', { budgetTokens: 6000 });
    expect(context.tables).toHaveLength(small.tables.length);
    expect(names(context)[0]).toBe('employees');
    expect(context.tokens).toBe(context.schemaTokens);
    expect(context.tables.find((t) => t.name === 'orders')?.columns).toEqual([
      'id',
      'customer_id',
      'total',
      'status',
      'created_at',
    ]);
  });

  it('renders compact DDL with types, keys, FK targets and comments', () => {
    const context = buildSchemaContext(small, 'orders', { budgetTokens: 6000 });
    expect(context.text.split('\n')[0]).toBe(
      'orders(id bigint pk, customer_id bigint → customers.id, total numeric(10,2) /* Order total incl. tax */, status text, created_at timestamptz)',
    );
    expect(context.text).toContain(
      'customers(id bigint pk, full_name text, email text, created_at timestamptz) -- People who buy from the shop',
    );
  });

  it('refuses a budget that is not a positive whole number', () => {
    expect(() => buildSchemaContext(small, 'orders', { budgetTokens: 0 })).toThrow(/positive whole number/);
  });
});
