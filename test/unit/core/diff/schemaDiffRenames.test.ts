/**
 * Renames in a schema diff, from snapshots alone: only a match that is the only one on both sides is taken (and
 * flagged); ambiguous columns or a table whose shape changed stay a drop and a create; snapshot files written
 * before functions, triggers and grants were read still load.
 */
import { describe, expect, it } from 'vitest';
import type { DiffSnapshot, DiffTable } from '../../../../src/core/diff/diffSnapshot';
import { parseSnapshotFile, SNAPSHOT_FORMAT } from '../../../../src/core/diff/diffSnapshot';
import { diffSchemas } from '../../../../src/core/diff/schemaDiff';

const col = (name: string, type = 'text') => ({ name, type, nullable: true, default: null });
const snap = (tables: DiffTable[]): DiffSnapshot => ({
  format: SNAPSHOT_FORMAT,
  version: 1,
  database: 'd',
  schemas: ['public'],
  enums: [],
  sequences: [],
  tables,
  constraints: [],
  indexes: [],
  views: [],
});
const t = (name: string, columns: DiffTable['columns']): DiffTable => ({
  schema: 'public',
  name,
  partitioned: false,
  columns,
});

describe('renames inferred by shape', () => {
  it('renames the one column gone and the one new of the same type, flagged', () => {
    const diff = diffSchemas(
      snap([t('p', [col('id', 'int'), col('a')])]),
      snap([t('p', [col('id', 'int'), col('b')])]),
    );
    expect(diff.statements).toHaveLength(1);
    expect(diff.statements[0]?.inferred).toBe(true);
    expect(diff.statements[0]?.sql).toMatch(
      /^-- Inferred rename .*\nALTER TABLE "public"."p" RENAME COLUMN "a" TO "b"$/,
    );
    expect(diff.notes.join(' ')).toContain('Inferred rename: column public.p.a → b');
  });

  it('two columns of one shape on each side: no guess, dropped and added', () => {
    const diff = diffSchemas(
      snap([t('p', [col('id', 'int'), col('a'), col('b')])]),
      snap([t('p', [col('id', 'int'), col('c'), col('d')])]),
    );
    const sql = diff.statements.map((s) => s.sql);
    expect(sql.some((s) => s.includes('RENAME'))).toBe(false);
    expect(sql).toContain('ALTER TABLE "public"."p" DROP COLUMN "a"');
    expect(sql).toContain('ALTER TABLE "public"."p" ADD COLUMN "c" text');
  });

  it('a table whose columns changed too is not a rename: dropped and created', () => {
    const diff = diffSchemas(
      snap([t('old', [col('id', 'int'), col('a')])]),
      snap([t('new', [col('id', 'int'), col('z')])]),
    );
    const sql = diff.statements.map((s) => s.sql);
    expect(sql.some((s) => s.includes('RENAME'))).toBe(false);
    expect(sql).toContain('DROP TABLE "public"."old"');
  });

  it('loads a snapshot file written before functions, triggers and grants were read', () => {
    const text = JSON.stringify(snap([t('p', [col('id', 'int')])]));
    const parsed = parseSnapshotFile(text, 'old.json');
    expect(parsed.functions).toBeUndefined();
    expect(diffSchemas(parsed, parsed).statements).toEqual([]);
  });
});
