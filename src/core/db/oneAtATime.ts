/**
 * Runs work one piece at a time, in the order it was given: the single connection of the embedded
 * database is held by one statement or one session at a time, so no other caller's statement lands inside
 * a session's transaction. `idle()` settles when the work queued so far has finished; it never rejects.
 */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  idle(): Promise<unknown> {
    return this.tail;
  }
}
