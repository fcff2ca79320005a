/** The port of the configured model (host/settings/modelProvider.ts): the core's model makers load when called. */
import type { CoreLoader } from '../lazyServices';
import type { ModelProviderPort } from '../settings/modelProvider';

/** `model`: the window's Gemini key and logger. */
export function modelProviderPort(
  core: CoreLoader,
  model: Pick<ModelProviderPort, 'geminiKey' | 'logger'>,
): ModelProviderPort {
  return {
    geminiKey: () => model.geminiKey(),
    logger: model.logger,
    createProvider: (...args) => core().createProvider(...args),
    createEmbedder: (...args) => core().createEmbedder(...args),
    toAgentError: (...args) => core().toAgentError(...args),
  };
}
