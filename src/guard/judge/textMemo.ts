/**
 * Results of a pure function of a statement's text (what transaction control it holds, its `$n` bound to
 * NULLs), remembered per exact text: a driver sends the same Parse for every execution of an unnamed
 * statement, and PostgreSQL's grammar (WASM) costs tens of microseconds a call. Bounded, least recently
 * used forgotten first; texts longer than MAX_TEXT are not kept.
 */
const MAX_TEXT = 4000;

export class TextMemo<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly max = 500) {}

  async get(text: string, compute: () => Promise<T>): Promise<T> {
    const known = this.known(text);
    if (known !== undefined) return known;
    const value = await compute();
    if (text.length <= MAX_TEXT) {
      this.entries.set(text, value);
      if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  /** The value remembered for `text` (most recently used now), or undefined: `get` would compute it. */
  known(text: string): T | undefined {
    const value = this.entries.get(text);
    if (value !== undefined) {
      this.entries.delete(text);
      this.entries.set(text, value);
    }
    return value;
  }
}
