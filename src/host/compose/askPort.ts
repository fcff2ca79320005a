/** The port of Ask…: the core's ask graph and run, the settings in force and the configured model. */
import type { AskPort } from '../ask/askController';
import type { CoreLoader } from '../lazyServices';
import type { ModelProviderPort } from '../settings/modelProvider';
import { configuredEmbedder, configuredProvider } from '../settings/modelProvider';
import { safetySettings } from '../settings/settings';
import { modelProviderPort } from './modelProviderPort';
import type { SettingsPort } from '../settings/settings';

/** `model`: the window's Gemini key and logger, what the configured model is made with. */
export function askPort(
  core: CoreLoader,
  settings: SettingsPort,
  rootDir: string,
  model: Pick<ModelProviderPort, 'geminiKey' | 'logger'>,
): AskPort {
  const modelDeps = modelProviderPort(core, model);
  return {
    newThreadId: (...args) => core().newThreadId(...args),
    readOutcome: (...args) => core().readOutcome(...args),
    resumeAsk: (...args) => core().resumeAsk(...args),
    toAgentError: (...args) => core().toAgentError(...args),
    workspacePaths: (...args) => core().workspacePaths(...args),
    saveImpactReport: (...args) => core().saveImpactReport(...args),
    fileAuditLog: (...args) => core().fileAuditLog(...args),
    sharedEmbeddingCache: (...args) => core().sharedEmbeddingCache(...args),
    askGraph: (deps, checkpointsDir) => core().buildAskGraph(deps, new (core().FileCheckpointSaver)(checkpointsDir)),
    agentError: (code, message, advice) => new (core().AgentError)(code, message, advice),
    safetySettings: () => safetySettings(settings, rootDir),
    configuredProvider: (feature) => configuredProvider(modelDeps, feature),
    configuredEmbedder: () => configuredEmbedder(modelDeps),
  };
}
