/** The port of the language-model tools: the MCP server's tools and error texts, the settings in force. */
import type { LanguageModelToolsPort } from '../agents/languageModelTools';
import type { CoreLoader } from '../lazyServices';
import { safetySettings } from '../settings/settings';
import type { SettingsPort } from '../settings/settings';

export function languageModelToolsPort(
  core: CoreLoader,
  settings: SettingsPort,
  window: Pick<LanguageModelToolsPort, 'session' | 'tickets' | 'rootDir' | 'logger'>,
): LanguageModelToolsPort {
  return {
    ...window,
    toolErrorInfo: (...args) => core().toolErrorInfo(...args),
    toolErrorText: (...args) => core().toolErrorText(...args),
    mcpTool: (name) => core().MCP_TOOLS.find((t) => t.name === name),
    safetySettings: () => safetySettings(settings, window.rootDir),
  };
}
