/**
 * One at a time per key, within this guard process: concurrent clients that send the identical statement
 * are decided in turn, so the first opens the ticket and the others find it (without this, 100 clients
 * sending one write opened 73 tickets for it, and an approved one could hide behind a pending twin).
 */
const running = new Map<string, Promise<unknown>>();

export async function oneAtATime<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = running.get(key) ?? Promise.resolve();
  const mine = previous.then(task, task);
  running.set(key, mine);
  try {
    return await mine;
  } finally {
    if (running.get(key) === mine) running.delete(key);
  }
}
