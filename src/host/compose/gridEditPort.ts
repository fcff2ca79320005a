/** The port of Edit in the results grid: the core's edit target and builder, the inline approval, the results' read. */
import type { ResultsView } from '../../shared/protocol';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import type { GridEditPort } from '../schema/gridEditing';
import type { InlineApproval } from '../sqlApproval/inlineApproval';
import { errorText } from '../ui/showError';

export function gridEditPort(
  core: CoreLoader,
  session: DatabaseSession,
  approval: InlineApproval,
  reread: (sql: string) => Promise<ResultsView>,
): GridEditPort {
  return {
    editTarget: async (sql, fields) => {
      await core().loadParser();
      return core().gridEditTarget(sql, await session.loadSnapshot(), fields);
    },
    build: (target, rows, edits) => core().buildGridEdits(target, rows, edits),
    review: (sql) => approval.reviewInEditor(sql),
    settled: (ticketId) => approval.settled(ticketId),
    reread,
    errorText: (error) => errorText(core().toAgentError(error)),
  };
}
