/** Names VS Code knows our agent surfaces by (package.json contributions); no `vscode` import, so tests can check them. */
export const MCP_PROVIDER_ID = 'postgresAgent.mcpServer';

/** Language-model tool names: the MCP tool's name behind this prefix, in the MCP server's order. */
export const LM_TOOL_PREFIX = 'pgagent_';
export const LM_TOOL_NAMES = [
  'list_tables',
  'describe_table',
  'schema_context',
  'run_read',
  'explain',
  'impact',
  'propose_write',
  'ticket_status',
  'execute_approved',
  'health',
  'top_queries',
  'advise_indexes',
] as const;
export type LmToolName = (typeof LM_TOOL_NAMES)[number];
