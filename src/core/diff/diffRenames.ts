/**
 * Renames a schema diff infers instead of a drop and a create: a table only in A and a table only in B (same
 * schema) with the same shape (columns: names, types, nullability, defaults, identity), or a column only in A and a
 * column only in B of one table with the same type, nullability, default and identity, when that match is the only
 * one on both sides. Anything less sure stays a DROP and a CREATE, which the DDL analysis warns loses data. Each
 * rename is flagged, in the statement itself (a comment the card shows) and in the notes. The constraints and
 * indexes a renamed table takes along keep their names; one whose definition matches one of B's under another
 * name is renamed too. What follows is diffed against A as it is after the renames.
 */
import type { DiffColumn, DiffSnapshot, DiffTable } from './diffSnapshot';

export interface Renames {
  /** A as it is once the renames ran. */
  a: DiffSnapshot;
  statements: string[];
  notes: string[];
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const key = (o: { schema: string; name: string }) => `${o.schema}\u0000${o.name}`;
const columnShape = (c: DiffColumn) => JSON.stringify([c.type, c.nullable, c.default, c.identity ?? '']);
const tableShape = (t: DiffTable) =>
  JSON.stringify([t.schema, t.partitioned, t.columns.map((c) => [c.name, columnShape(c)])]);

/** Pairs of (only in A, only in B) with the same shape, when each shape has exactly one of each. */
function uniquePairs<T>(gone: T[], fresh: T[], shape: (t: T) => string): { pairs: [T, T][]; ambiguous: T[][] } {
  const groups = new Map<string, { gone: T[]; fresh: T[] }>();
  for (const [side, items] of [
    ['gone', gone],
    ['fresh', fresh],
  ] as const)
    for (const item of items) {
      const k = shape(item);
      const group = groups.get(k) ?? { gone: [], fresh: [] };
      group[side].push(item);
      groups.set(k, group);
    }
  const pairs: [T, T][] = [];
  const ambiguous: T[][] = [];
  for (const g of groups.values()) {
    if (g.gone.length === 1 && g.fresh.length === 1) pairs.push([g.gone[0]!, g.fresh[0]!]);
    else if (g.gone.length > 0 && g.fresh.length > 0) ambiguous.push([...g.gone, ...g.fresh]);
  }
  return { pairs, ambiguous };
}

/** `old` → `fresh` where SQL text names the table (ON s.t, REFERENCES t(, REFERENCES s.t(). */
function retable(text: string, schema: string, old: string, fresh: string): string {
  const spell = (n: string) => (/^[a-z_][a-z0-9_$]*$/.test(n) ? n : q(n));
  const [o, f] = [spell(old), spell(fresh)];
  return text
    .split(` ON ${spell(schema)}.${o} `)
    .join(` ON ${spell(schema)}.${f} `)
    .split(`REFERENCES ${spell(schema)}.${o}(`)
    .join(`REFERENCES ${spell(schema)}.${f}(`)
    .split(`REFERENCES ${o}(`)
    .join(`REFERENCES ${f}(`);
}

export function inferRenames(a0: DiffSnapshot, b: DiffSnapshot): Renames {
  let a: DiffSnapshot = { ...a0 };
  const statements: string[] = [];
  const notes: string[] = [];
  const inferred = (what: string, sql: string) => {
    statements.push(`-- Inferred rename (${what}): check it is one before you approve\n${sql}`);
    notes.push(`Inferred rename: ${what}. Check it is one; otherwise drop and create by hand.`);
  };

  // Tables.
  const tablesB = new Set(b.tables.map(key));
  const tablesA = new Set(a.tables.map(key));
  const tables = uniquePairs(
    a.tables.filter((t) => !tablesB.has(key(t))),
    b.tables.filter((t) => !tablesA.has(key(t))),
    tableShape,
  );
  for (const group of tables.ambiguous)
    notes.push(
      `Tables ${group.map((t) => `${t.schema}.${t.name}`).join(', ')} have the same shape: not taken for renames (dropped and created).`,
    );
  for (const [old, fresh] of tables.pairs) {
    const { schema } = old;
    inferred(
      `table ${schema}.${old.name} → ${fresh.name}, the one table of A and of B with these columns`,
      `ALTER TABLE ${q(schema)}.${q(old.name)} RENAME TO ${q(fresh.name)}`,
    );
    const onTable = <T extends { schema: string; table: string }>(o: T): T =>
      o.schema === schema && o.table === old.name ? { ...o, table: fresh.name } : o;
    a = {
      ...a,
      tables: a.tables.map((t) => (t === old ? { ...t, name: fresh.name } : t)),
      constraints: a.constraints.map((c) => ({
        ...onTable(c),
        definition: retable(c.definition, schema, old.name, fresh.name),
      })),
      indexes: a.indexes.map((i) => ({
        ...onTable(i),
        definition: retable(i.definition, schema, old.name, fresh.name),
      })),
      triggers: (a.triggers ?? []).map((t) => ({
        ...onTable(t),
        definition: retable(t.definition, schema, old.name, fresh.name),
      })),
      grants: (a.grants ?? []).map((g) =>
        g.kind === 'table' && g.schema === schema && g.name === old.name ? { ...g, name: fresh.name } : g,
      ),
    };
  }

  // Columns of the tables in both.
  const byKeyB = new Map(b.tables.map((t) => [key(t), t]));
  a = {
    ...a,
    tables: a.tables.map((ta) => {
      const tb = byKeyB.get(key(ta));
      if (!tb) return ta;
      const namesB = new Set(tb.columns.map((c) => c.name));
      const namesA = new Set(ta.columns.map((c) => c.name));
      const columns = uniquePairs(
        ta.columns.filter((c) => !namesB.has(c.name)),
        tb.columns.filter((c) => !namesA.has(c.name)),
        columnShape,
      );
      if (columns.pairs.length === 0) return ta;
      const renamed = new Map(columns.pairs.map(([o, f]) => [o.name, f.name]));
      for (const [o, f] of columns.pairs)
        inferred(
          `column ${ta.schema}.${ta.name}.${o.name} → ${f.name}, the one column gone and the one new with type ${f.type}`,
          `ALTER TABLE ${q(ta.schema)}.${q(ta.name)} RENAME COLUMN ${q(o.name)} TO ${q(f.name)}`,
        );
      return { ...ta, columns: ta.columns.map((c) => ({ ...c, name: renamed.get(c.name) ?? c.name })) };
    }),
  };

  // Constraints and indexes of a renamed table that B names otherwise, same definition.
  const renamedTables = new Set(tables.pairs.map(([, f]) => key(f)));
  const ofRenamed = (o: { schema: string; table: string }) => renamedTables.has(`${o.schema}\u0000${o.table}`);
  const conName = (c: { schema: string; table: string; name: string }) => `${c.schema}\u0000${c.table}\u0000${c.name}`;
  const consB = new Set(b.constraints.map(conName));
  const consA = new Set(a.constraints.map(conName));
  const cons = uniquePairs(
    a.constraints.filter((c) => ofRenamed(c) && !consB.has(conName(c))),
    b.constraints.filter((c) => ofRenamed(c) && !consA.has(conName(c))),
    (c) => `${c.schema}\u0000${c.table}\u0000${c.type}\u0000${c.definition}`,
  );
  for (const [o, f] of cons.pairs)
    statements.push(`ALTER TABLE ${q(o.schema)}.${q(o.table)} RENAME CONSTRAINT ${q(o.name)} TO ${q(f.name)}`);
  const idxB = new Set(b.indexes.map(key));
  const idxA = new Set(a.indexes.map(key));
  const tail = (i: { definition: string }) => i.definition.slice(i.definition.indexOf(' ON '));
  const idx = uniquePairs(
    a.indexes.filter((i) => ofRenamed(i) && !idxB.has(key(i))),
    b.indexes.filter((i) => ofRenamed(i) && !idxA.has(key(i))),
    (i) => `${i.schema}\u0000${i.table}\u0000${tail(i)}`,
  );
  for (const [o, f] of idx.pairs) statements.push(`ALTER INDEX ${q(o.schema)}.${q(o.name)} RENAME TO ${q(f.name)}`);
  const conTo = new Map(cons.pairs.map(([o, f]) => [o, f]));
  const idxTo = new Map(idx.pairs.map(([o, f]) => [o, f]));
  a = {
    ...a,
    constraints: a.constraints.map((c) => (conTo.has(c) ? { ...c, name: conTo.get(c)!.name } : c)),
    indexes: a.indexes.map((i) => {
      const f = idxTo.get(i);
      return f ? { ...i, name: f.name, definition: f.definition } : i;
    }),
  };
  return { a, statements, notes };
}
