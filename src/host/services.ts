/**
 * The core as the extension uses it, built into its own bundle (dist/services.js) and required on first
 * use, so activation loads none of the database driver, PGlite or the parser.
 */
export { openDatabase } from '../core/db/openDatabase';
export { introspectSchema } from '../core/db/introspect';
export {
  pagesShowing,
  schemaLevel,
  schemaTreeChildren,
  selectFirstRows,
  tableChildren,
  tablesLevel,
} from '../core/db/schemaTree';
export { tableDdlText } from '../core/db/tableDdl';
export { diagramSchemas, neighbourhoodGraph, schemaGraph, searchTables } from '../core/db/schemaGraph';
export { DiagramLayouts } from '../core/diagram/diagramLayouts';
export { buildGridEdits } from '../core/sql/gridEdits';
export { gridEditTarget } from '../core/sql/gridEditTarget';
export { explainRead, readToExplain } from '../core/sql/explainPlan';
export { historyFor } from '../core/sql/history/historyFor';
export { readHistory } from '../core/sql/history/readHistory';
export { HistoryTail } from '../core/sql/history/historyTail';
export { historyDatabaseKey } from '../core/sql/history/historyEntry';
export { runAgainOf } from '../core/sql/history/runAgain';
export { readDiffSnapshot } from '../core/diff/diffCatalog';
export { parseSnapshotFile } from '../core/diff/diffSnapshot';
export { diffSchemas } from '../core/diff/schemaDiff';
export { migrationSteps } from '../core/diff/migrationFiles';
export { runRead } from '../core/sql/runRead';
export { runHealth } from '../core/dba/runHealth';
export { adviseIndexes } from '../core/dba/indexAdvice/adviseIndexes';
export { openSchemaCache } from '../core/db/openSchemaCache';
export { schemaChanges } from '../core/db/schemaChanges';
export { connectionKey, resolveTarget } from '../core/db/connectionTarget';
export { openTicketStore } from '../core/approvals/openTicketStore';
export { runSql } from '../core/sql/runSql';
export { executeApproved } from '../core/sql/executeApproved';
export { classifySql } from '../core/sql/classify';
export { loadParser } from '../core/sql/parse';
export { DEFAULT_SAFETY } from '../core/sql/safetySettings';
export { saveImpactReport, saveUndoScript, workspaceUndoSink } from '../core/sql/writeArtifacts';
export { approvalRulesOf, readWorkspaceConfig, workspacePaths } from '../core/config/workspace';
export { readSettingsInForce } from '../core/settings/settingsInForce';
export { ownConfigFile, ownKnownHostsFile, readOwnConfig } from '../core/config/ownConfig';
export { STEP_TITLES, testConnection } from '../core/db/testConnection';
export { sqlHash, ticketHash } from '../core/approvals/ticket';
export { toAgentError } from '../core/platform/errors';
export { AgentError } from '../core/platform/errors';
export { buildAskGraph } from '../core/ask/graph';
export { FileCheckpointSaver } from '../core/ask/fileCheckpointer';
export { fileAuditLog } from '../core/ask/audit';
export { newThreadId } from '../core/ask/threadId';
export { ASK_ID_PATTERN as THREAD_ID_PATTERN } from '../shared/ids';
export { readOutcome, resumeAsk } from '../core/ask/askRun';
export { decideTicket } from '../core/approvals/approvalPath';
export { publicKeyText } from '../core/approvals/decisionSignature';
export {
  assertPassphrase,
  openPrivateKey,
  parseEnvelope,
  sealPrivateKey,
  MIN_PASSPHRASE_LENGTH,
} from '../core/approvals/keyEnvelope';
export { decisionScope } from '../core/approvals/signedMode';
export { signatureState } from '../core/approvals/approvalPolicy';
export { databaseResolver } from '../core/sql/executionResolver';
export { createEmbedder, createProvider } from '../core/llm/createProvider';
export { sharedEmbeddingCache } from '../core/llm/embeddingCache';
export { JobRunner } from '../core/jobs/jobRunner';
export { DEFAULT_PLANNING } from '../core/jobs/planningSettings';
export { JobStore } from '../core/jobs/jobStore';
export { JobLeases } from '../core/jobs/jobLease';
export { openLeaseBackend } from '../core/jobs/leaseBackends';
export { openJobCheckpointer } from '../core/jobs/jobCheckpointer';
export { readJobDetail } from '../core/jobs/jobDetail';
export { readJobTimeline } from '../core/jobs/jobTimeline';
export { sendReviewMessage } from '../core/review/reviewChat';
export { readChat } from '../core/review/chatLog';
export { applyPlanEdit, discardPlanEdit } from '../core/review/planEdit';
export { MCP_TOOLS } from '../mcp/toolList';
export { toolErrorInfo, toolErrorText } from '../mcp/toolErrors';
export { CollabSessionRunner } from '../core/collab/collabSession';
export { CollabStore } from '../core/collab/sessionStore';
export { readSessionView } from '../core/collab/sessionView';
export { executeAsJob } from '../core/collab/executeAsJob';
export { parseModelList } from '../core/collab/collabModels';
export { jobSearchIndexer } from '../core/review/jobSearchIndex';
