/** The window's settings port (host/settings/settings.ts): each function loads the core when called, never before. */
import type { CoreLoader } from '../lazyServices';
import type { SettingsPort } from '../settings/settings';

export function settingsPort(core: CoreLoader): SettingsPort {
  return {
    defaults: () => ({ safety: core().DEFAULT_SAFETY, planning: core().DEFAULT_PLANNING }),
    ownConfigFile: () => core().ownConfigFile(process.env),
    readSettingsInForce: (request) => core().readSettingsInForce(request),
    history: (rootDir) => core().historyFor(core().workspacePaths(rootDir).history, 'vscode'),
    error: (code, message, advice) => new (core().AgentError)(code, message, advice),
  };
}
