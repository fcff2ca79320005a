/** The ports of the schema views: the Schema tree, the results grid and Explain Query, from the core on first use. */
import type * as vscode from 'vscode';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import type { QueryPlanPort } from '../schema/queryPlanView';
import type { ResultsPanelPort } from '../schema/resultsPanel';
import type { SchemaTreePort } from '../schema/schemaTreeView';
import { safetySettings } from '../settings/settings';
import { showError } from '../ui/showError';
import type { SettingsPort } from '../settings/settings';

/** The tree reads the window's schema cache by schema (the index, one schema's tables, the table names alone). */
export function schemaTreePort(core: CoreLoader, session: DatabaseSession): SchemaTreePort {
  return {
    schemas: async () => {
      const { cache, db, key } = await session.schemaCache();
      return cache.schemas(db, key);
    },
    tablesOf: async (schema) => {
      const { cache, db, key } = await session.schemaCache();
      return cache.tablesOf(db, key, schema);
    },
    tableNames: async () => {
      const { cache, db, key } = await session.schemaCache();
      return cache.tableNames(db, key);
    },
    schemaTreeChildren: (...args) => core().schemaTreeChildren(...args),
    schemaLevel: (...args) => core().schemaLevel(...args),
    tablesLevel: (...args) => core().tablesLevel(...args),
    tableChildren: (...args) => core().tableChildren(...args),
    pagesShowing: (...args) => core().pagesShowing(...args),
    selectFirstRows: (...args) => core().selectFirstRows(...args),
    tableDdlText: (...args) => core().tableDdlText(...args),
  };
}

export function resultsPanelPort(core: CoreLoader, settings: SettingsPort, rootDir: string): ResultsPanelPort {
  return {
    readToExplain: (...args) => core().readToExplain(...args),
    runRead: (...args) => core().runRead(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    safetySettings: () => safetySettings(settings, rootDir),
  };
}

export function queryPlanPort(
  core: CoreLoader,
  settings: SettingsPort,
  rootDir: string,
  output: vscode.LogOutputChannel,
): QueryPlanPort {
  return {
    explainRead: (...args) => core().explainRead(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    safetySettings: () => safetySettings(settings, rootDir),
    showError: (error) => showError(core, error, output),
  };
}
