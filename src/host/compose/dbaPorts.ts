/** The ports of the DBA tools: the Health view's checks and Advise Indexes, from the core; errors shown with the log. */
import type * as vscode from 'vscode';
import type { AdviseIndexesPort } from '../dba/adviseIndexesCommand';
import type { HealthViewPort } from '../dba/healthView';
import type { CoreLoader } from '../lazyServices';
import { showError } from '../ui/showError';

export function healthViewPort(core: CoreLoader, output: vscode.LogOutputChannel): HealthViewPort {
  return {
    runHealth: (...args) => core().runHealth(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    showError: (error) => showError(core, error, output),
  };
}

export function adviseIndexesPort(core: CoreLoader, output: vscode.LogOutputChannel): AdviseIndexesPort {
  return {
    adviseIndexes: (...args) => core().adviseIndexes(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    showError: (error) => showError(core, error, output),
  };
}
