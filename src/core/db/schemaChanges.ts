/**
 * Where the schema cache is invalidated: ONE event per process. Whoever commits a schema change through the
 * agent (executeApproved after approved DDL, a person's Refresh) announces it here, naming the connection and,
 * when known, the schemas it touched; every SchemaCache of the process subscribes and forgets exactly those
 * entries (memory, file and Redis). Nothing else carries an "invalidate" callback.
 */

export interface SchemaChange {
  /** Password-free connection key (the one tickets are bound to). */
  connection: string;
  /**
   * The schemas that changed, forgotten now. Absent: a change somewhere (a DDL), so every cache checks that
   * connection's per-schema versions on its next read and re-reads only the schemas that moved.
   */
  schemas?: readonly string[];
  /** A person's Refresh: everything of that connection is forgotten and read again. */
  everything?: boolean;
}

export type SchemaChangeListener = (change: SchemaChange) => Promise<void>;

export class SchemaChanges {
  private readonly listeners = new Set<SchemaChangeListener>();

  /** Returns the unsubscribe. */
  subscribe(listener: SchemaChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every subscriber; waits for them all (a failing one is reported after the others ran). */
  async announce(change: SchemaChange): Promise<void> {
    const results = await Promise.allSettled([...this.listeners].map((listener) => listener(change)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** The process's one event. */
export const schemaChanges = new SchemaChanges();
