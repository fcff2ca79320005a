/**
 * The core as the extension uses it, built into its own bundle (dist/services.js) and required on first
 * use, so activation loads none of the database driver, PGlite or the parser.
 */
export { openDatabase } from '../core/db/openDatabase';
export { introspectSchema } from '../core/db/introspect';
export { openSchemaCache } from '../core/db/schemaCache';
export { connectionKey, resolveTarget } from '../core/db/connectionTarget';
export { openTicketStore } from '../core/approvals/openTicketStore';
export { runSql } from '../core/sql/runSql';
export { executeApproved } from '../core/sql/executeApproved';
export { classifySql } from '../core/sql/classify';
export { loadParser } from '../core/sql/parse';
export { DEFAULT_SAFETY } from '../core/sql/safetySettings';
export { saveImpactReport, saveUndoScript, workspaceUndoSink } from '../core/sql/writeArtifacts';
export { approvalRulesOf, readWorkspaceConfig, workspacePaths } from '../core/workspace';
export { resolvePlanning, resolveSafety } from '../core/workspacePolicy';
export { sqlHash } from '../core/approvals/ticket';
export { toAgentError } from '../core/errors';
export { AgentError } from '../core/errors';
export { buildAskGraph } from '../core/agent/graph';
export { FileCheckpointSaver } from '../core/agent/fileCheckpointer';
export { fileAuditLog } from '../core/agent/audit';
export { newThreadId, THREAD_ID_PATTERN } from '../core/agent/threadId';
export { readOutcome, resumeAsk } from '../core/agent/askRun';
export { decideTicket } from '../core/approvals/approvalPath';
export { addApprover, checkNewApprover } from '../core/approvals/approverConfig';
export { publicKeyText } from '../core/approvals/decisionSignature';
export { signatureState } from '../core/approvals/approvalPolicy';
export { databaseResolver } from '../core/approvals/executionResolver';
export { createEmbedder, createProvider } from '../core/llm/createProvider';
export { sharedEmbeddingCache } from '../core/llm/embeddingCache';
export { DEFAULT_PLANNING, JobRunner } from '../core/jobs/jobRunner';
export { JobStore } from '../core/jobs/jobStore';
export { JobLeases } from '../core/jobs/jobLease';
export { openLeaseBackend } from '../core/jobs/leaseBackends';
export { openJobCheckpointer } from '../core/jobs/jobCheckpointer';
export { readJobDetail } from '../core/jobs/jobDetail';
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
