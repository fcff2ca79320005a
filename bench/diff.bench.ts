// Schema diff of two 2,000-table schemas (test/fixtures/bigSchema.ts): B is A with 5 % of its tables changed
// (a column added, a type changed, a column made NOT NULL, an index added, a foreign key added) plus 20 new and
// 20 dropped tables. Target: < 2 s. The floor in the same run: copying both schemas (structuredClone), the least
// any diff that reads every column of both sides must do.
import { bigSnapshot } from '../test/fixtures/bigSchema';
import { fromIntrospection } from '../src/core/diff/diffSnapshot';
import type { DiffSnapshot } from '../src/core/diff/diffSnapshot';
import { diffSchemas } from '../src/core/diff/schemaDiff';
import { percentile, report } from './stats';

function changed(a: DiffSnapshot): DiffSnapshot {
  const b = structuredClone(a);
  b.tables.forEach((t, i) => {
    if (i % 20 !== 0) return;
    t.columns.push({ name: 'added_col', type: 'text', nullable: true, default: null });
    const first = t.columns[1];
    if (first) first.type = first.type === 'text' ? 'varchar(500)' : 'text';
    const second = t.columns[2];
    if (second) second.nullable = false;
    b.indexes.push({
      schema: t.schema,
      table: t.name,
      name: `${t.name}_added_idx`,
      definition: `CREATE INDEX "${t.name}_added_idx" ON "${t.schema}"."${t.name}" USING btree (added_col)`,
    });
  });
  const dropped = new Set(b.tables.slice(-20).map((t) => t.name));
  b.tables = b.tables.filter((t) => !dropped.has(t.name));
  b.constraints = b.constraints.filter(
    (c) => !dropped.has(c.table) && !dropped.has(/REFERENCES "public"\."([^"]+)"/.exec(c.definition)?.[1] ?? ''),
  );
  for (let i = 0; i < 20; i++)
    b.tables.push({
      schema: 'public',
      name: `new_table_${i}`,
      partitioned: false,
      columns: [{ name: 'id', type: 'bigint', nullable: false, default: null }],
    });
  return b;
}

const a = fromIntrospection(bigSnapshot());
const b = changed(a);
const columns = a.tables.reduce((n, t) => n + t.columns.length, 0);
const runs = 15;
const diffTimes: number[] = [];
const floorTimes: number[] = [];
let statements = 0;
for (let i = 0; i < runs; i++) {
  let start = performance.now();
  statements = diffSchemas(a, b).statements.length;
  diffTimes.push(performance.now() - start);
  start = performance.now();
  structuredClone(a);
  structuredClone(b);
  floorTimes.push(performance.now() - start);
}
report(`schemas: ${a.tables.length} tables, ${columns} columns each side`, statements, 'statements in the diff');
report('diff of two 2,000-table schemas p50', percentile(diffTimes, 50), 'ms');
report('diff of two 2,000-table schemas p95 (target < 2000)', percentile(diffTimes, 95), 'ms');
report('floor: copying both schemas p50', percentile(floorTimes, 50), 'ms');
