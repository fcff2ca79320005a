/**
 * PostgreSQL's table-level lock modes and their conflict matrix, as documented in "Explicit Locking"
 * (https://www.postgresql.org/docs/current/explicit-locking.html, table 13.2), and what each mode
 * means for the people using the table: does it block their reads, their writes, or neither.
 */

export const LOCK_MODES = [
  'ACCESS SHARE',
  'ROW SHARE',
  'ROW EXCLUSIVE',
  'SHARE UPDATE EXCLUSIVE',
  'SHARE',
  'SHARE ROW EXCLUSIVE',
  'EXCLUSIVE',
  'ACCESS EXCLUSIVE',
] as const;

export type LockMode = (typeof LOCK_MODES)[number];

/** What a lock held on a table blocks of ordinary traffic (SELECT = ACCESS SHARE, INSERT/UPDATE/DELETE = ROW EXCLUSIVE). */
export type Blocks = 'reads and writes' | 'writes' | 'nothing';

/** The modes each mode conflicts with (table 13.2; the matrix is symmetric). */
const CONFLICTS: Record<LockMode, readonly LockMode[]> = {
  'ACCESS SHARE': ['ACCESS EXCLUSIVE'],
  'ROW SHARE': ['EXCLUSIVE', 'ACCESS EXCLUSIVE'],
  'ROW EXCLUSIVE': ['SHARE', 'SHARE ROW EXCLUSIVE', 'EXCLUSIVE', 'ACCESS EXCLUSIVE'],
  'SHARE UPDATE EXCLUSIVE': ['SHARE UPDATE EXCLUSIVE', 'SHARE', 'SHARE ROW EXCLUSIVE', 'EXCLUSIVE', 'ACCESS EXCLUSIVE'],
  SHARE: ['ROW EXCLUSIVE', 'SHARE UPDATE EXCLUSIVE', 'SHARE ROW EXCLUSIVE', 'EXCLUSIVE', 'ACCESS EXCLUSIVE'],
  'SHARE ROW EXCLUSIVE': [
    'ROW EXCLUSIVE',
    'SHARE UPDATE EXCLUSIVE',
    'SHARE',
    'SHARE ROW EXCLUSIVE',
    'EXCLUSIVE',
    'ACCESS EXCLUSIVE',
  ],
  EXCLUSIVE: [
    'ROW SHARE',
    'ROW EXCLUSIVE',
    'SHARE UPDATE EXCLUSIVE',
    'SHARE',
    'SHARE ROW EXCLUSIVE',
    'EXCLUSIVE',
    'ACCESS EXCLUSIVE',
  ],
  'ACCESS EXCLUSIVE': LOCK_MODES,
};

export function conflicts(a: LockMode, b: LockMode): boolean {
  return CONFLICTS[a].includes(b);
}

export function blocksOf(mode: LockMode): Blocks {
  if (conflicts(mode, 'ACCESS SHARE')) return 'reads and writes';
  if (conflicts(mode, 'ROW EXCLUSIVE')) return 'writes';
  return 'nothing';
}

export function strongest(a: LockMode, b: LockMode): LockMode {
  return LOCK_MODES.indexOf(a) >= LOCK_MODES.indexOf(b) ? a : b;
}

/** pg_locks.mode ("AccessExclusiveLock") → our name ("ACCESS EXCLUSIVE"); undefined for non-table modes. */
export function fromPgLocksMode(mode: string): LockMode | undefined {
  const words = mode
    .replace(/Lock$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toUpperCase();
  return (LOCK_MODES as readonly string[]).includes(words) ? (words as LockMode) : undefined;
}
