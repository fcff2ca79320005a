/**
 * Holds on a resource by running work, so that replacing it never closes it under that work: a resource
 * retired while held is closed when its last hold ends; one retired unheld is closed at once.
 */
export class RetiringHolds<T> {
  private readonly holds = new Map<T, number>();
  private readonly retired = new Set<T>();

  constructor(private readonly close: (resource: T) => Promise<void>) {}

  async use<R>(resource: T, work: () => Promise<R>): Promise<R> {
    this.holds.set(resource, (this.holds.get(resource) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = (this.holds.get(resource) ?? 1) - 1;
      if (left > 0) this.holds.set(resource, left);
      else {
        this.holds.delete(resource);
        if (this.retired.delete(resource)) await this.close(resource);
      }
    }
  }

  /** Closes `resource` now, or when the work holding it ends; returns how many holds it waits for. */
  async retire(resource: T): Promise<number> {
    const held = this.holds.get(resource) ?? 0;
    if (held > 0) this.retired.add(resource);
    else await this.close(resource);
    return held;
  }

  /** Closes everything retired, held or not (the window is going away). */
  async closeAll(): Promise<void> {
    const left = [...this.retired];
    this.retired.clear();
    await Promise.all(left.map((resource) => this.close(resource)));
  }
}
