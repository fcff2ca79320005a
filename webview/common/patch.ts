/**
 * Re-rendering without losing what the person is doing: a section whose data did not change keeps its
 * DOM node (focus, scroll, caret, open/closed state), and children are patched in place, not replaced.
 */

const cache = new Map<string, { data: unknown; node: HTMLElement }>();

/** Deep equality of JSON-like data (what the host's snapshots are made of); stops at the first difference. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const key of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** The node built for `slot` last time if `data` is the same (by value), else a newly built one. */
export function memo(slot: string, data: unknown, build: () => HTMLElement): HTMLElement {
  const cached = cache.get(slot);
  if (cached && sameData(cached.data, data)) return cached.node;
  const node = build();
  cache.set(slot, { data, node });
  return node;
}

/** Makes `parent`'s children exactly `nodes`, in order, moving only what has to move. */
export function patchChildren(parent: Element, nodes: readonly Node[]): void {
  const wanted = new Set(nodes);
  for (const child of [...parent.childNodes]) if (!wanted.has(child)) child.remove();
  nodes.forEach((node, i) => {
    const at = parent.childNodes[i];
    if (at !== node) parent.insertBefore(node, at ?? null);
  });
}
