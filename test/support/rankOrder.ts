/** How a ranking test says "these come first": each of `first` is shown, above each of `then` that is shown. */
import { expect } from 'vitest';

export function expectAbove(shown: readonly string[], first: readonly string[], then: readonly string[]): void {
  for (const a of first) {
    expect(shown, a).toContain(a);
    for (const b of then) {
      const at = shown.indexOf(b);
      if (at >= 0) expect(shown.indexOf(a), `${a} above ${b}`).toBeLessThan(at);
    }
  }
}
