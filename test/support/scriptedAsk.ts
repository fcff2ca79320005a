/** One ask run from question to outcome on a real database with the scripted model, in a workspace of the test's. */
import { join } from 'node:path';
import { fileAuditLog } from '../../src/core/ask/audit';
import type { AskOutcome } from '../../src/core/ask/askRun';
import { startAsk } from '../../src/core/ask/askRun';
import type { AskDeps } from '../../src/core/ask/deps';
import { FileCheckpointSaver } from '../../src/core/ask/fileCheckpointer';
import { buildAskGraph } from '../../src/core/ask/graph';
import { newThreadId } from '../../src/core/ask/threadId';
import { FileTicketStore } from '../../src/core/approvals/fileTicketStore';
import type { Db } from '../../src/core/db/db';
import { silentLogger } from '../../src/core/platform/logger';
import { DEFAULT_SAFETY } from '../../src/core/sql/safetySettings';
import { scriptedGemini } from './scriptedGemini';

/**
 * `question` asked on `db` (its key `connectionKey`) with the scripted model of `server`, default safety, tickets
 * in `workspace`/approvals (closed after), undo, runs and checkpoints beside them; `deps`: how the schema is
 * loaded, and the test's own (a budget, embeddings).
 */
export async function scriptedAsk(
  on: { db: Db; connectionKey: string; server: { url: string }; workspace: string },
  question: string,
  deps: Pick<AskDeps, 'loadSnapshot'> & Partial<AskDeps>,
): Promise<AskOutcome> {
  const ticketStore = new FileTicketStore(join(on.workspace, 'approvals'), { logger: silentLogger });
  try {
    const graph = buildAskGraph(
      {
        db: on.db,
        connectionKey: on.connectionKey,
        ticketStore,
        undoDir: join(on.workspace, 'undo'),
        provider: scriptedGemini(on.server),
        settings: DEFAULT_SAFETY,
        logger: silentLogger,
        requestedBy: 'tester',
        audit: fileAuditLog(join(on.workspace, 'runs')),
        ...deps,
      },
      new FileCheckpointSaver(join(on.workspace, 'checkpoints')),
    );
    return await startAsk(graph, newThreadId(), question);
  } finally {
    await ticketStore.close();
  }
}
