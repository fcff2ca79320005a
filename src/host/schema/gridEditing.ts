/**
 * Edit in the results grid (issue 33): "Edit" asks whether the tab's read is of one table with its primary key;
 * "Review changes" turns the edits into ONE write (core/sql/gridEdits.ts, from the host's own copy of the rows as
 * read) checked as Run SQL with Review checks any SQL: impact, ticket, CodeLens and card; nothing is written
 * without that ticket. A preview that changes fewer rows than were edited means rows changed since they were
 * read (the WHERE holds their read values): said on the grid. Once the write ran, the tab's read runs again.
 */
import type { BuiltEdits, EditTarget } from '../../core/sql/gridEdits';
import type { EditTargetResult } from '../../core/sql/gridEditTarget';
import type {
  GridEdit,
  GridEditHostMessage,
  GridEditState,
  GridEditWebviewMessage,
} from '../../shared/gridEditProtocol';
import type { ImpactView, ResultsView } from '../../shared/protocol';

/** What editing needs of the window, built by the composition root. */
export interface GridEditPort {
  /** Whether (and how) the read's rows can be edited, against the open database's schema snapshot. */
  editTarget(sql: string, fields: readonly { name: string }[]): Promise<EditTargetResult>;
  /** Throws AgentError BAD_INPUT for edits that cannot be written as asked. */
  build(target: EditTarget, rows: readonly unknown[][], edits: readonly GridEdit[]): BuiltEdits;
  /** The write at the inline approval (a new editor with its CodeLens and card); undefined when it did not get that far. */
  review(sql: string): Promise<{ ticketId: string; impact: ImpactView } | undefined>;
  settled(ticketId: string): Promise<{ status: string; rows?: number }>;
  /** Runs a read again with the read limits. */
  reread(sql: string): Promise<ResultsView>;
  errorText(error: unknown): string;
}

/** The results panel's tabs as editing sees them. */
export interface EditableTabs {
  result(tab: string): ResultsView | undefined;
  replace(tab: string, result: ResultsView): void;
  post(message: GridEditHostMessage): void;
}

export class GridEditing {
  private readonly targets = new Map<string, { sql: string; target: EditTarget }>();

  constructor(private readonly port: GridEditPort) {}

  async handle(message: GridEditWebviewMessage, tabs: EditableTabs): Promise<void> {
    const say = (state: GridEditState) => tabs.post({ type: 'editState', tab: message.tab, state });
    const result = tabs.result(message.tab);
    if (!result) {
      say({ phase: 'refused', reason: 'This result is no longer kept: run the read again.' });
      return;
    }
    try {
      if (message.type === 'startEdit') {
        const found = await this.port.editTarget(result.sql, result.fields);
        if (!found.ok) {
          say({ phase: 'refused', reason: found.reason });
          return;
        }
        this.targets.set(message.tab, { sql: result.sql, target: found.target });
        say({
          phase: 'editing',
          table: `${found.target.schema}.${found.target.table}`,
          columns: found.target.columns.map((c) => c?.name ?? null),
          primaryKey: found.target.primaryKey,
        });
        return;
      }
      await this.review(message.tab, result, message.edits, tabs, say);
    } catch (error) {
      say({ phase: 'failed', message: this.port.errorText(error) });
    }
  }

  private async review(
    tab: string,
    result: ResultsView,
    edits: GridEdit[],
    tabs: EditableTabs,
    say: (state: GridEditState) => void,
  ): Promise<void> {
    const known = this.targets.get(tab);
    if (!known || known.sql !== result.sql) {
      say({ phase: 'refused', reason: 'Press Edit again: this result was not opened for editing.' });
      return;
    }
    const built = this.port.build(known.target, result.rows, edits);
    const held = await this.port.review(built.sql);
    if (!held) {
      say({
        phase: 'failed',
        message: 'The changes were not held for approval (see the message); nothing was written.',
      });
      return;
    }
    say({ phase: 'held', ticketId: held.ticketId, sql: built.sql, conflicts: conflictText(held.impact, built) });
    const settled = await this.port.settled(held.ticketId);
    if (settled.status !== 'executed') {
      say({
        phase: 'failed',
        message:
          settled.status === 'replaced'
            ? 'The SQL was edited in its editor: it became a write of its own. Run the read again once it ran.'
            : `The write was ${settled.status}: nothing was written. Your edits are still here.`,
      });
      return;
    }
    const expected = held.impact.exactRows;
    const fresh = await this.port.reread(result.sql);
    tabs.replace(tab, fresh);
    this.targets.delete(tab);
    const rows = settled.rows ?? 0;
    say({
      phase: 'done',
      message:
        expected !== null && rows < expected
          ? `Written: ${rows} rows, fewer than the ${expected} previewed. Rows changed by someone else since the review were left as they were; the grid shows them as they are now.`
          : `Written: ${rows} row${rows === 1 ? '' : 's'} changed (in every table: cascades and triggers included). The grid shows the rows as they are now.`,
    });
  }
}

/** Rows of the table itself the preview changed, against those edited; text when fewer (a conflict) or when it would fail. */
export function conflictText(impact: ImpactView, built: BuiltEdits): string | null {
  if (impact.wouldFail) return `The write would fail: ${impact.wouldFail.message}`;
  if (!impact.previewed) return null;
  const direct = impact.tables.filter((t) => t.via === 'direct');
  const sum = (key: 'updated' | 'deleted' | 'inserted') => direct.reduce((n, t) => n + t[key], 0);
  const missing = [
    ['edited', built.expected.updated, sum('updated')],
    ['deleted', built.expected.deleted, sum('deleted')],
  ] as const;
  const lost = missing.filter(([, want, got]) => got < want);
  if (lost.length === 0) return null;
  return `${lost.map(([what, want, got]) => `${want - got} of ${want} ${what} rows`).join(' and ')} changed since they were read: the write would leave those rows as they are now. Reject it, run the read again and redo those edits.`;
}
