/** The ask graph: question → intent → context → SQL → validate (→ repair) → read | write with approval. */
import { END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { AskDeps } from './deps';
import { makeAwaitApprovalNode } from './nodes/awaitApproval';
import { makeBuildSqlNode } from './nodes/buildSql';
import { makeExecuteWriteNode } from './nodes/executeWrite';
import { makeExtractIntentNode } from './nodes/extractIntent';
import { makeGatherContextNode } from './nodes/gatherContext';
import { makePreviewWriteNode } from './nodes/previewWrite';
import { makeRepairSqlNode } from './nodes/repairSql';
import { makeReportFailureNode } from './nodes/reportFailure';
import { makeRunReadNode } from './nodes/runRead';
import { makeSummarizeNode } from './nodes/summarize';
import { makeValidateSqlNode } from './nodes/validateSql';
import { routeAfterApproval, routeAfterModel, routeAfterValidation, routeUnlessError } from './routes';
import { AskState } from './state';
import { CarriedChecks } from './carriedChecks';

export function buildAskGraph(deps: AskDeps, checkpointer: BaseCheckpointSaver) {
  // The validation's check of the SQL goes to the read or the preview in memory, not through the state.
  const checks = new CarriedChecks();
  return new StateGraph(AskState)
    .addNode('extractIntent', makeExtractIntentNode(deps))
    .addNode('gatherContext', makeGatherContextNode(deps))
    .addNode('buildSql', makeBuildSqlNode(deps))
    .addNode('validateSql', makeValidateSqlNode(deps, checks))
    .addNode('repairSql', makeRepairSqlNode(deps))
    .addNode('runRead', makeRunReadNode(deps, checks))
    .addNode('summarize', makeSummarizeNode(deps))
    .addNode('previewWrite', makePreviewWriteNode(deps, checks))
    .addNode('awaitApproval', makeAwaitApprovalNode(deps))
    .addNode('executeWrite', makeExecuteWriteNode(deps))
    .addNode('reportFailure', makeReportFailureNode(deps))
    .addEdge(START, 'extractIntent')
    .addEdge('extractIntent', 'gatherContext')
    .addEdge('gatherContext', 'buildSql')
    .addConditionalEdges('buildSql', routeAfterModel, { validate: 'validateSql', stop: END })
    .addConditionalEdges('repairSql', routeAfterModel, { validate: 'validateSql', stop: END })
    .addConditionalEdges('validateSql', routeAfterValidation, {
      repair: 'repairSql',
      read: 'runRead',
      write: 'previewWrite',
      refused: 'reportFailure',
      failed: 'reportFailure',
      stop: END,
    })
    .addConditionalEdges('runRead', routeUnlessError, { next: 'summarize', stop: END })
    .addEdge('summarize', END)
    .addConditionalEdges('previewWrite', routeUnlessError, { next: 'awaitApproval', stop: END })
    .addConditionalEdges('awaitApproval', routeAfterApproval, { execute: 'executeWrite', stop: END })
    .addEdge('executeWrite', END)
    .addEdge('reportFailure', END)
    .compile({ checkpointer });
}

export type AskGraph = ReturnType<typeof buildAskGraph>;
