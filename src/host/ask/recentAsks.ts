/** The navigator's recent asks: each Ask… run as it was last shown, kept in the workspace's state. */
import type * as vscode from 'vscode';
import { ASK_ID_PATTERN } from '../../shared/ids';
import type { AnswerView, RecentAskView } from '../../shared/protocol';
import { RECENT_ASKS_KEPT, withAnswer } from '../ui/navigatorView';

const KEY = 'postgresAgent.recentAsks';

export class RecentAsks {
  private list_: RecentAskView[];

  constructor(private readonly memento: vscode.Memento) {
    const saved = memento.get<unknown>(KEY, []);
    // Whatever an older version (or a hand edit) left there: only well-formed entries come back.
    this.list_ = (Array.isArray(saved) ? saved : [])
      .filter(isRecentAsk)
      .slice(0, RECENT_ASKS_KEPT)
      // A run does not outlive its window: one still "running" when the window closed was stopped by it.
      .map((r) => (r.status === 'running' ? { ...r, status: 'cancelled' as const } : r));
  }

  list(): RecentAskView[] {
    return this.list_;
  }

  /** Records the answer the window shows now (call on every change; saves only when something changed). */
  observe(answer: AnswerView | null): void {
    const next = withAnswer(this.list_, answer);
    if (next === undefined) return;
    this.list_ = next;
    void this.memento.update(KEY, next);
  }
}

function isRecentAsk(value: unknown): value is RecentAskView {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Partial<Record<keyof RecentAskView, unknown>>;
  return (
    typeof r.threadId === 'string' &&
    ASK_ID_PATTERN.test(r.threadId) &&
    typeof r.question === 'string' &&
    (r.sql === undefined || typeof r.sql === 'string')
  );
}
