/**
 * Functions, procedures and triggers in a schema diff. A function whose signature (name and argument types) is in
 * both is replaced in place (CREATE OR REPLACE) when only its body or attributes changed; when what it returns or
 * its kind changed, it is dropped and made again, the triggers calling it dropped before and made again after.
 * A signature only in A is dropped last; one only in B made: before the tables when its language does not check
 * the tables it reads (plpgsql…), after them when it does (SQL). Triggers come after their functions and tables.
 */
import type { DiffFunction, DiffSnapshot, DiffTrigger } from './diffSnapshot';

export interface RoutineSteps {
  /** Step 2: triggers that go or change, and functions made again (before their new form). */
  drop: string[];
  /** Step 1: new and replaced functions whose bodies are not checked against tables. */
  beforeTables: string[];
  /** After the tables: new and replaced SQL functions. */
  afterTables: string[];
  /** After the views: new and changed triggers. */
  triggers: string[];
  /** Step 7: functions no longer in B. */
  dropLast: string[];
  /** `kind schema name args` of functions dropped and made again (their grants start from the defaults). */
  recreated: Set<string>;
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const signature = (f: DiffFunction) => `${f.schema}\u0000${f.name}\u0000${f.args}`;
const routine = (f: DiffFunction) =>
  `${f.kind === 'p' ? 'PROCEDURE' : 'FUNCTION'} ${q(f.schema)}.${q(f.name)}(${f.args})`;
const triggerKey = (t: DiffTrigger) => `${t.schema}\u0000${t.table}\u0000${t.name}`;
const createSql = (f: DiffFunction) => f.definition.trim().replace(/;$/, '');

export function diffRoutines(a: DiffSnapshot, b: DiffSnapshot, tableKeysB: ReadonlySet<string>): RoutineSteps {
  const steps: RoutineSteps = {
    drop: [],
    beforeTables: [],
    afterTables: [],
    triggers: [],
    dropLast: [],
    recreated: new Set(),
  };
  const fnsA = new Map((a.functions ?? []).map((f) => [signature(f), f]));
  const fnsB = new Map((b.functions ?? []).map((f) => [signature(f), f]));
  const remade: DiffFunction[] = [];
  for (const f of b.functions ?? []) {
    const old = fnsA.get(signature(f));
    if (old && old.definition === f.definition) continue;
    const again = old !== undefined && (old.result !== f.result || old.kind !== f.kind);
    if (again) {
      remade.push(old);
      steps.recreated.add(`function\u0000${f.schema}\u0000${f.name}\u0000${f.args}`);
    }
    // Made again: after its drop (step 2), so after the tables.
    (f.language === 'sql' || again ? steps.afterTables : steps.beforeTables).push(createSql(f));
  }
  for (const f of a.functions ?? []) if (!fnsB.has(signature(f))) steps.dropLast.push(`DROP ${routine(f)}`);

  // A trigger calling a function made again is dropped with it and made again after it.
  const callsRemade = (t: DiffTrigger) => remade.some((f) => t.definition.includes(`${f.name}(`));
  const trigsB = new Map((b.triggers ?? []).map((t) => [triggerKey(t), t]));
  const trigsA = new Map((a.triggers ?? []).map((t) => [triggerKey(t), t]));
  const dropped = new Set<string>();
  for (const t of a.triggers ?? []) {
    const other = trigsB.get(triggerKey(t));
    if (!tableKeysB.has(`${t.schema}\u0000${t.table}`)) continue; // goes with its table
    if (!other || other.definition !== t.definition || callsRemade(t)) {
      steps.drop.push(`DROP TRIGGER ${q(t.name)} ON ${q(t.schema)}.${q(t.table)}`);
      dropped.add(triggerKey(t));
    }
  }
  for (const f of remade) steps.drop.push(`DROP ${routine(f)}`);
  for (const t of b.triggers ?? []) {
    const old = trigsA.get(triggerKey(t));
    if (!old || dropped.has(triggerKey(t))) steps.triggers.push(t.definition);
  }
  return steps;
}
