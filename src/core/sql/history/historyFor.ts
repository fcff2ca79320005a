/**
 * The query history of a surface in this process: one HistoryLog per folder (each flushes when the process exits),
 * bound to the surface's origin and the OS user. What the CLI and VS Code put in their settings in force.
 */
import { userInfo } from 'node:os';
import type { HistoryOrigin } from './historyEntry';
import { HistoryLog } from './historyLog';
import type { QueryHistory } from './queryHistory';
import { queryHistory } from './queryHistory';

const logs = new Map<string, HistoryLog>();

export function historyFor(dir: string, origin: HistoryOrigin): QueryHistory {
  let log = logs.get(dir);
  if (!log) {
    log = new HistoryLog(dir);
    logs.set(dir, log);
  }
  return queryHistory(log, origin, osUser());
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
