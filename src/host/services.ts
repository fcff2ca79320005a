/**
 * The core as the extension uses it, built into its own bundle (dist/services.js) and required on first
 * use, so activation loads none of the database driver, PGlite or the parser.
 */
export { openDatabase } from '../core/db/openDatabase';
export { introspectSchema } from '../core/db/introspect';
export { resolveTarget } from '../core/db/connectionTarget';
export { readWorkspaceConfig, workspacePaths } from '../core/workspace';
export { toAgentError } from '../core/errors';
