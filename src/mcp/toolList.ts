/** Every tool of `pg-agent mcp`, in the order a client lists them. None can approve a ticket. */
import type { McpTool } from './toolSpec';
import { adviseIndexesTool } from './tools/adviseIndexes';
import { describeTableTool } from './tools/describeTable';
import { executeApprovedTool } from './tools/executeApproved';
import { explainTool } from './tools/explain';
import { healthTool } from './tools/health';
import { impactTool } from './tools/impact';
import { listTablesTool } from './tools/listTables';
import { proposeWriteTool } from './tools/proposeWrite';
import { runReadTool } from './tools/runRead';
import { schemaContextTool } from './tools/schemaContext';
import { ticketStatusTool } from './tools/ticketStatus';
import { topQueriesTool } from './tools/topQueries';

export const MCP_TOOLS: readonly McpTool[] = [
  listTablesTool,
  describeTableTool,
  schemaContextTool,
  runReadTool,
  explainTool,
  impactTool,
  proposeWriteTool,
  ticketStatusTool,
  executeApprovedTool,
  healthTool,
  topQueriesTool,
  adviseIndexesTool,
];
