/** The port of planning with several models: the core's session runner and store, the settings, the configured model. */
import type { CollabPort } from '../collab/collabController';
import type { CoreLoader } from '../lazyServices';
import type { ModelProviderPort } from '../settings/modelProvider';
import { configuredProvider } from '../settings/modelProvider';
import { safetySettings } from '../settings/settings';
import { modelProviderPort } from './modelProviderPort';
import type { SettingsPort } from '../settings/settings';

/** `model`: the window's Gemini key and logger, what the configured model is made with. */
export function collabPort(
  core: CoreLoader,
  settings: SettingsPort,
  rootDir: string,
  model: Pick<ModelProviderPort, 'geminiKey' | 'logger'>,
): CollabPort {
  const { logger } = model;
  return {
    executeAsJob: (...args) => core().executeAsJob(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    readSessionView: (...args) => core().readSessionView(...args),
    parseModelList: (...args) => core().parseModelList(...args),
    createProvider: (...args) => core().createProvider(...args),
    collabStore: () => new (core().CollabStore)(rootDir, { logger }),
    collabRunner: (deps) => new (core().CollabSessionRunner)(deps),
    safetySettings: () => safetySettings(settings, rootDir),
    configuredProvider: (feature) => configuredProvider(modelProviderPort(core, model), feature),
  };
}
