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
export { saveImpactReport, saveUndoScript } from '../core/sql/writeArtifacts';
export { readWorkspaceConfig, workspacePaths } from '../core/workspace';
export { toAgentError } from '../core/errors';
export { AgentError } from '../core/errors';
export { buildAskGraph } from '../core/agent/graph';
export { FileCheckpointSaver } from '../core/agent/fileCheckpointer';
export { fileAuditLog } from '../core/agent/audit';
export { newThreadId, THREAD_ID_PATTERN } from '../core/agent/threadId';
export { readOutcome, resumeFromTicket } from '../core/agent/askRun';
export { createProvider } from '../core/llm/createProvider';
export { JobRunner } from '../core/jobs/jobRunner';
export { JobStore } from '../core/jobs/jobStore';
export { readJobDetail } from '../core/jobs/jobDetail';
export { sendReviewMessage } from '../core/review/reviewChat';
export { readChat } from '../core/review/chatLog';
export { applyPlanEdit, discardPlanEdit } from '../core/review/planEdit';
