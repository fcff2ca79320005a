/** The port of the schema diagram: the open database's snapshot, the core's graph builders and layouts, the Schema tree. */
import * as vscode from 'vscode';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import type { DiagramPort } from '../schema/diagramPanel';

export function diagramPort(
  core: CoreLoader,
  session: DatabaseSession,
  revealTable: (schema: string, table: string) => Promise<void>,
): DiagramPort {
  return {
    snapshot: () => session.loadSnapshot(),
    neighbourhood: (snapshot, schema, table, depth) => core().neighbourhoodGraph(snapshot, schema, table, depth),
    schema: (snapshot, schema) => core().schemaGraph(snapshot, schema),
    schemas: (snapshot) => core().diagramSchemas(snapshot),
    search: (snapshot, query) => core().searchTables(snapshot, query),
    layouts: () => core().DiagramLayouts,
    revealTable,
    showFirstRows: async (schema, name) => {
      await vscode.commands.executeCommand('postgresAgent.selectFirstRows', { kind: 'table', schema, name });
    },
  };
}
