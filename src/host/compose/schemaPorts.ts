/** The ports of the schema views: the Schema tree, the results grid and Explain Query, from the core on first use. */
import type * as vscode from 'vscode';
import type { CoreLoader } from '../lazyServices';
import type { QueryPlanPort } from '../schema/queryPlanView';
import type { ResultsPanelPort } from '../schema/resultsPanel';
import type { SchemaTreePort } from '../schema/schemaTreeView';
import { safetySettings } from '../settings/settings';
import { showError } from '../ui/showError';
import type { SettingsPort } from '../settings/settings';

export function schemaTreePort(core: CoreLoader): SchemaTreePort {
  return {
    schemaTreeChildren: (...args) => core().schemaTreeChildren(...args),
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
