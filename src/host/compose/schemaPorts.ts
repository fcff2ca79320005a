/** The ports of the schema views: the Schema tree, the results grid and Explain Query, from the core on first use. */
import type * as vscode from 'vscode';
import type { CoreLoader } from '../lazyServices';
import type { QueryPlanPort } from '../schema/queryPlanView';
import type { ResultsPanelPort } from '../schema/resultsPanel';
import type { SchemaTreePort } from '../schema/schemaTreeView';
import { safetySettings } from '../settings/settings';
import { showError } from '../ui/showError';
import { settingsPort } from './settingsPort';

export function schemaTreePort(core: CoreLoader): SchemaTreePort {
  return {
    schemaTreeChildren: (...args) => core().schemaTreeChildren(...args),
    selectFirstRows: (...args) => core().selectFirstRows(...args),
    tableDdlText: (...args) => core().tableDdlText(...args),
  };
}

export function resultsPanelPort(core: CoreLoader, rootDir: string): ResultsPanelPort {
  return {
    readToExplain: (...args) => core().readToExplain(...args),
    runRead: (...args) => core().runRead(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    safetySettings: () => safetySettings(settingsPort(core), rootDir),
  };
}

export function queryPlanPort(core: CoreLoader, rootDir: string, output: vscode.LogOutputChannel): QueryPlanPort {
  return {
    explainRead: (...args) => core().explainRead(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    safetySettings: () => safetySettings(settingsPort(core), rootDir),
    showError: (error) => showError(core, error, output),
  };
}
