/**
 * Privileges in a schema diff: what A grants that B does not is revoked, what B grants that A does not is granted,
 * on tables, views, sequences, schemas and functions (a grant with its grant option is another grant). Objects made
 * again by the diff (a view or function dropped and created) start from the defaults, so B's grants are given anew.
 */
import type { DiffGrant, DiffSnapshot } from './diffSnapshot';

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const objectKey = (g: DiffGrant) => `${g.kind}\u0000${g.schema}\u0000${g.name}\u0000${g.args}`;
const grantKey = (g: DiffGrant) => `${objectKey(g)}\u0000${g.grantee}\u0000${g.privilege}\u0000${g.grantable}`;

function target(g: DiffGrant): string {
  switch (g.kind) {
    case 'schema':
      return `SCHEMA ${q(g.schema)}`;
    case 'function':
      return `ROUTINE ${q(g.schema)}.${q(g.name)}(${g.args})`;
    case 'sequence':
      return `SEQUENCE ${q(g.schema)}.${q(g.name)}`;
    default:
      return `TABLE ${q(g.schema)}.${q(g.name)}`;
  }
}

const grantee = (g: DiffGrant) => (g.grantee === 'PUBLIC' ? 'PUBLIC' : q(g.grantee));

/**
 * `keptFromA(key)`: the object (grantObjectKey) is in A and in B and the diff neither drops nor makes it again;
 * only then are A's grants on it still there when these statements run, and to be revoked when B lacks them.
 */
export function diffGrants(
  a: DiffSnapshot,
  b: DiffSnapshot,
  keptFromA: (objectKey: string) => boolean,
): { revoke: string[]; grant: string[] } {
  const fromA = (a.grants ?? []).filter((g) => keptFromA(objectKey(g)));
  const inA = new Set(fromA.map(grantKey));
  const inB = new Set((b.grants ?? []).map(grantKey));
  return {
    revoke: fromA
      .filter((g) => !inB.has(grantKey(g)))
      .map((g) => `REVOKE ${g.privilege} ON ${target(g)} FROM ${grantee(g)}`),
    grant: (b.grants ?? [])
      .filter((g) => !inA.has(grantKey(g)))
      .map((g) => `GRANT ${g.privilege} ON ${target(g)} TO ${grantee(g)}${g.grantable ? ' WITH GRANT OPTION' : ''}`),
  };
}
