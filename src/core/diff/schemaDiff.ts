/**
 * The DDL that turns schema A into schema B, to run on A, in dependency order and in the safer spelling where one
 * exists: constraints on tables that exist are added NOT VALID and validated afterwards, SET NOT NULL goes through
 * a validated CHECK, indexes on tables that exist are built CONCURRENTLY. Statements come in three phases:
 * `change` (one transaction), `validate` (one transaction, after it) and `concurrent` (each alone, outside a
 * transaction, as PostgreSQL requires). Functions, triggers and privileges: diffRoutines.ts and diffGrants.ts.
 * A table or column is renamed only when diffRenames.ts finds one sure match by shape (flagged as inferred);
 * otherwise a name only in A is dropped, one only in B created.
 */
import type { DiffColumn, DiffConstraint, DiffSnapshot, DiffTable, DiffView } from './diffSnapshot';
import { diffGrants } from './diffGrants';
import { inferRenames } from './diffRenames';
import { diffRoutines } from './diffRoutines';

export type DiffPhase = 'change' | 'validate' | 'concurrent';

export interface DiffStatement {
  phase: DiffPhase;
  sql: string;
  /** A rename the diff inferred by shape (the statement starts with a comment saying so). */
  inferred?: true;
}

export interface SchemaDiff {
  statements: DiffStatement[];
  /** What the diff saw and did not carry over (e.g. a changed enum's dropped label). */
  notes: string[];
}

export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

const qualified = (o: { schema: string; name: string }) => `${ident(o.schema)}.${ident(o.name)}`;
const key = (o: { schema: string; name: string }) => `${o.schema}\u0000${o.name}`;
const conKey = (c: DiffConstraint) => `${c.schema}\u0000${c.table}\u0000${c.name}`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

function byKey<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T> {
  return new Map(items.map((i) => [keyOf(i), i]));
}

export function diffSchemas(a0: DiffSnapshot, b: DiffSnapshot): SchemaDiff {
  const out: DiffStatement[] = [];
  const change = (sql: string) => out.push({ phase: 'change', sql });
  const validate = (sql: string) => out.push({ phase: 'validate', sql });
  const concurrent = (sql: string) => out.push({ phase: 'concurrent', sql });

  // 0. Renames inferred by shape, first: what follows is diffed against A as it is after them.
  const renames = inferRenames(a0, b);
  const a = renames.a;
  const notes: string[] = [...renames.notes];
  for (const sql of renames.statements)
    out.push({ phase: 'change', sql, ...(sql.startsWith('--') ? { inferred: true } : {}) });

  const tablesA = byKey(a.tables, key);
  const tablesB = byKey(b.tables, key);
  const consA = byKey(a.constraints, conKey);
  const consB = byKey(b.constraints, conKey);
  const idxA = byKey(a.indexes, key);
  const idxB = byKey(b.indexes, key);
  const viewsA = byKey(a.views, key);
  const viewsB = byKey(b.views, key);

  // Tables whose columns change shape: views reading them are dropped first and made again after.
  const reshaped = new Set<string>();
  for (const [k, ta] of tablesA) {
    const tb = tablesB.get(k);
    if (!tb) reshaped.add(k);
    else if (columnsReshaped(ta, tb)) reshaped.add(k);
  }
  const mentions = (v: DiffView, k: string) => v.definition.includes(k.split('\u0000')[1] ?? '\u0000');
  const viewChanged = (v: DiffView) => {
    const other = viewsB.get(key(v));
    return !other || other.definition !== v.definition || other.materialized !== v.materialized;
  };
  const viewsToDrop = a.views.filter((v) => viewChanged(v) || [...reshaped].some((k) => mentions(v, k)));
  const dropped = new Set(viewsToDrop.map(key));
  const routines = diffRoutines(a, b, new Set(tablesB.keys()));

  // 1. What the new objects need first: schemas, enums, sequences.
  const schemasA = new Set(a.schemas);
  for (const s of b.schemas) if (!schemasA.has(s)) change(`CREATE SCHEMA ${ident(s)}`);
  const enumsA = byKey(a.enums, key);
  for (const e of b.enums) {
    const old = enumsA.get(key(e));
    if (!old) change(`CREATE TYPE ${qualified(e)} AS ENUM (${e.labels.map(literal).join(', ')})`);
    else {
      for (const label of e.labels.filter((l) => !old.labels.includes(l)))
        concurrent(`ALTER TYPE ${qualified(e)} ADD VALUE IF NOT EXISTS ${literal(label)}`);
      const gone = old.labels.filter((l) => !e.labels.includes(l));
      if (gone.length > 0)
        notes.push(
          `Enum ${e.schema}.${e.name} lost label(s) ${gone.join(', ')}: PostgreSQL cannot drop an enum label; not carried over.`,
        );
    }
  }
  const seqsA = byKey(a.sequences, key);
  for (const s of b.sequences)
    if (!seqsA.has(key(s)))
      change(`CREATE SEQUENCE ${qualified(s)} AS ${s.type} START WITH ${s.start} INCREMENT BY ${s.increment}`);
  for (const sql of routines.beforeTables) change(sql);

  // 2. What goes away or changes, dependents first: views, then foreign keys, then other constraints and indexes.
  for (const v of [...viewsToDrop].reverse())
    change(`DROP ${v.materialized ? 'MATERIALIZED VIEW' : 'VIEW'} ${qualified(v)}`);
  for (const sql of routines.drop) change(sql);
  // Added NOT VALID by an earlier step of this diff: only its validation is left.
  const pendingValidation = (old: DiffConstraint | undefined, c: DiffConstraint) =>
    old !== undefined && old.definition === `${c.definition} NOT VALID`;
  // A CHECK (c IS NOT NULL) an earlier step added on the way to SET NOT NULL: kept until that step ends.
  const notNullStep = (c: DiffConstraint) =>
    c.type === 'c' && /^CHECK \(\(\S+ IS NOT NULL\)\)( NOT VALID)?$/.test(c.definition) && c.name.endsWith('_not_null');
  const conChanged = (c: DiffConstraint) => {
    const other = consB.get(conKey(c));
    if (!other && notNullStep(c) && tablesB.has(`${c.schema}\u0000${c.table}`)) return false;
    if (other && pendingValidation(c, other)) return false;
    return !other || other.definition !== c.definition || !tablesB.has(`${c.schema}\u0000${c.table}`);
  };
  const goneCons = a.constraints.filter(conChanged);
  for (const c of [...goneCons.filter((c) => c.type === 'f'), ...goneCons.filter((c) => c.type !== 'f')])
    if (tablesB.has(`${c.schema}\u0000${c.table}`) || c.type === 'f')
      change(`ALTER TABLE ${qualified({ schema: c.schema, name: c.table })} DROP CONSTRAINT ${ident(c.name)}`);
  for (const i of a.indexes) {
    const other = idxB.get(key(i));
    if ((!other || other.definition !== i.definition) && tablesB.has(`${i.schema}\u0000${i.table}`))
      change(`DROP INDEX ${qualified(i)}`);
  }

  // 3. Tables: created, altered column by column, dropped.
  // A new table is made with its keys and checks (nothing to scan yet); foreign keys come after every table.
  const inline = (t: DiffTable) =>
    b.constraints.filter((c) => c.schema === t.schema && c.table === t.name && c.type !== 'f');
  for (const t of b.tables) if (!tablesA.has(key(t))) change(createTable(t, inline(t)));
  for (const tb of b.tables) {
    const ta = tablesA.get(key(tb));
    if (ta) alterColumns(ta, tb, { change, validate }, consA);
  }
  for (const t of a.tables) if (!tablesB.has(key(t))) change(`DROP TABLE ${qualified(t)}`);
  for (const sql of routines.afterTables) change(sql);

  // 4. Constraints: primary keys and uniques first (foreign keys reference them), then checks, then foreign keys.
  const newCons = b.constraints.filter((c) => {
    const old = consA.get(conKey(c));
    if (!tablesA.has(`${c.schema}\u0000${c.table}`) && c.type !== 'f') return false; // made with its table
    if (pendingValidation(old, c)) {
      validate(`ALTER TABLE ${qualified({ schema: c.schema, name: c.table })} VALIDATE CONSTRAINT ${ident(c.name)}`);
      return false;
    }
    return !old || old.definition !== c.definition || !tablesA.has(`${c.schema}\u0000${c.table}`);
  });
  const rank = { p: 0, u: 1, x: 2, c: 3, f: 4 } as const;
  for (const c of [...newCons].sort((x, y) => rank[x.type] - rank[y.type])) {
    const table = qualified({ schema: c.schema, name: c.table });
    const existing = tablesA.has(`${c.schema}\u0000${c.table}`);
    // On a table with rows, a check or foreign key is added without reading them (NOT VALID), then validated
    // under a lock that lets reads and writes go on.
    if (existing && (c.type === 'c' || c.type === 'f') && !c.definition.includes('NOT VALID')) {
      change(`ALTER TABLE ${table} ADD CONSTRAINT ${ident(c.name)} ${c.definition} NOT VALID`);
      validate(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${ident(c.name)}`);
    } else change(`ALTER TABLE ${table} ADD CONSTRAINT ${ident(c.name)} ${c.definition}`);
  }

  // 5. Indexes: on a table that exists, built CONCURRENTLY (each alone, outside a transaction).
  for (const i of b.indexes) {
    const old = idxA.get(key(i));
    if (old && old.definition === i.definition && tablesA.has(`${i.schema}\u0000${i.table}`)) continue;
    const existing =
      tablesA.has(`${i.schema}\u0000${i.table}`) && !tablesB.get(`${i.schema}\u0000${i.table}`)?.partitioned;
    if (existing) concurrent(i.definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX CONCURRENTLY '));
    else change(i.definition);
  }

  // 6. Views (new, changed, or dropped above because a table under them changed), in B's creation order.
  for (const v of b.views)
    if (!viewsA.has(key(v)) || dropped.has(key(v)))
      change(
        `CREATE ${v.materialized ? 'MATERIALIZED VIEW' : 'VIEW'} ${qualified(v)} AS ${v.definition.trim().replace(/;$/, '')}`,
      );

  // 6b. Triggers (after their functions and tables), then privileges (every object made by now).
  for (const sql of routines.triggers) change(sql);
  const kept = new Set<string>();
  const both = <T>(xs: readonly T[], inB: (x: T) => boolean, keyOf: (x: T) => string) => {
    for (const x of xs) if (inB(x)) kept.add(keyOf(x));
  };
  const rel = (kind: string, o: { schema: string; name: string }) => `${kind}\u0000${o.schema}\u0000${o.name}\u0000`;
  both(
    a.tables,
    (t) => tablesB.has(key(t)),
    (t) => rel('table', t),
  );
  both(
    a.views,
    (v) => viewsB.has(key(v)) && !dropped.has(key(v)),
    (v) => rel('table', v),
  );
  const seqKeysB = new Set(b.sequences.map(key));
  both(
    a.sequences,
    (s) => seqKeysB.has(key(s)),
    (s) => rel('sequence', s),
  );
  const schemaSetB = new Set(b.schemas);
  both(
    a.schemas,
    (s) => schemaSetB.has(s),
    (s) => rel('schema', { schema: s, name: s }),
  );
  const fnKeysB = new Set((b.functions ?? []).map((f) => `function\u0000${f.schema}\u0000${f.name}\u0000${f.args}`));
  both(
    a.functions ?? [],
    (f) => fnKeysB.has(`function\u0000${f.schema}\u0000${f.name}\u0000${f.args}`),
    (f) => `function\u0000${f.schema}\u0000${f.name}\u0000${f.args}`,
  );
  for (const r of routines.recreated) kept.delete(r);
  const grants = diffGrants(a, b, (k) => kept.has(k));
  for (const sql of [...grants.revoke, ...grants.grant]) change(sql);

  // 7. Last: what nothing uses any more.
  for (const sql of routines.dropLast) change(sql);
  const seqsB = byKey(b.sequences, key);
  for (const s of a.sequences) if (!seqsB.has(key(s))) change(`DROP SEQUENCE IF EXISTS ${qualified(s)}`);
  const enumsB = byKey(b.enums, key);
  for (const e of a.enums) if (!enumsB.has(key(e))) change(`DROP TYPE ${qualified(e)}`);
  const schemasB = new Set(b.schemas);
  for (const s of a.schemas) if (!schemasB.has(s)) change(`DROP SCHEMA ${ident(s)}`);
  return { statements: out, notes };
}

const GENERATED = { a: 'ALWAYS', d: 'BY DEFAULT' } as const;

function columnSql(c: DiffColumn): string {
  const identity = c.identity ? ` GENERATED ${GENERATED[c.identity]} AS IDENTITY` : '';
  return `${ident(c.name)} ${c.type}${c.default !== null ? ` DEFAULT ${c.default}` : ''}${identity}${c.nullable ? '' : ' NOT NULL'}`;
}

function createTable(t: DiffTable, constraints: readonly DiffConstraint[]): string {
  const parts = [...t.columns.map(columnSql), ...constraints.map((c) => `CONSTRAINT ${ident(c.name)} ${c.definition}`)];
  return `CREATE TABLE ${qualified(t)} (${parts.join(', ')})`;
}

function columnsReshaped(a: DiffTable, b: DiffTable): boolean {
  const bCols = new Map(b.columns.map((c) => [c.name, c]));
  return a.columns.some((c) => bCols.get(c.name)?.type !== c.type);
}

function alterColumns(
  a: DiffTable,
  b: DiffTable,
  to: { change: (sql: string) => void; validate: (sql: string) => void },
  consA: ReadonlyMap<string, DiffConstraint>,
): void {
  const table = qualified(b);
  const aCols = new Map(a.columns.map((c) => [c.name, c]));
  const bCols = new Map(b.columns.map((c) => [c.name, c]));
  for (const c of b.columns) {
    const old = aCols.get(c.name);
    if (!old) {
      to.change(`ALTER TABLE ${table} ADD COLUMN ${columnSql(c)}`);
      continue;
    }
    const column = `ALTER TABLE ${table} ALTER COLUMN ${ident(c.name)}`;
    // An identity goes before a default is set, and comes after SET NOT NULL (it needs one) and DROP DEFAULT.
    if (old.identity && !c.identity) to.change(`${column} DROP IDENTITY`);
    if (old.type !== c.type)
      to.change(`ALTER TABLE ${table} ALTER COLUMN ${ident(c.name)} TYPE ${c.type} USING ${ident(c.name)}::${c.type}`);
    if (old.default !== c.default)
      to.change(
        c.default === null
          ? `ALTER TABLE ${table} ALTER COLUMN ${ident(c.name)} DROP DEFAULT`
          : `ALTER TABLE ${table} ALTER COLUMN ${ident(c.name)} SET DEFAULT ${c.default}`,
      );
    if (old.nullable && !c.nullable) {
      // SET NOT NULL scans the table under ACCESS EXCLUSIVE, unless a validated CHECK already proves it.
      const checkName = `${b.name}_${c.name}_not_null`.slice(0, 63);
      const check = ident(checkName);
      const earlier = consA.get(`${b.schema}\u0000${b.name}\u0000${checkName}`);
      if (!earlier)
        to.change(`ALTER TABLE ${table} ADD CONSTRAINT ${check} CHECK (${ident(c.name)} IS NOT NULL) NOT VALID`);
      if (!earlier || earlier.definition.endsWith('NOT VALID'))
        to.validate(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${check}`);
      to.validate(`ALTER TABLE ${table} ALTER COLUMN ${ident(c.name)} SET NOT NULL`);
      to.validate(`ALTER TABLE ${table} DROP CONSTRAINT ${check}`);
    } else if (!old.nullable && c.nullable)
      to.change(`ALTER TABLE ${table} ALTER COLUMN ${ident(c.name)} DROP NOT NULL`);
    if (c.identity && !old.identity)
      (old.nullable ? to.validate : to.change)(`${column} ADD GENERATED ${GENERATED[c.identity]} AS IDENTITY`);
    else if (c.identity && old.identity && c.identity !== old.identity)
      to.change(`${column} SET GENERATED ${GENERATED[c.identity]}`);
  }
  for (const c of a.columns) if (!bCols.has(c.name)) to.change(`ALTER TABLE ${table} DROP COLUMN ${ident(c.name)}`);
}
