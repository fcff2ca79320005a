/** The version `pg-agent --version` prints and the MCP server reports. */
export const VERSION = '0.1.0';
