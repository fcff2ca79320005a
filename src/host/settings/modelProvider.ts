/**
 * The model the user configured (postgresAgent.model.*), shared by Ask… and jobs: Gemini with the key
 * from SecretStorage (GEMINI_API_KEY as fallback; PGAGENT_GEMINI_BASE_URL points it elsewhere, e.g. a
 * test server) or an OpenAI-compatible endpoint. When none is usable, says how to fix it.
 */
import * as vscode from 'vscode';
import type { Embedder } from '../../core/llm/embeddings';
import type { LlmProvider, ModelPrices } from '../../core/llm/provider';
import type { Logger } from '../../core/platform/logger';
import type { CoreServices } from '../lazyServices';

/** The core's model makers, loaded when called (host/compose/modelProviderPort.ts), and the window's key and log. */
export interface ModelProviderPort extends Pick<CoreServices, 'createProvider' | 'createEmbedder' | 'toAgentError'> {
  /** The Gemini key from SecretStorage. */
  geminiKey(): Promise<string | undefined>;
  logger: Logger;
}

/**
 * The configured provider, or undefined after telling the person what is missing. `feature` names what
 * needs the model in the message ("Ask…", "Jobs").
 */
export async function configuredProvider(port: ModelProviderPort, feature: string): Promise<LlmProvider | undefined> {
  const config = vscode.workspace.getConfiguration('postgresAgent');
  const prices = config.get<ModelPrices>('model.prices');
  const common = { maxRetries: 1, ...(prices && Object.keys(prices).length > 0 ? { prices } : {}) };
  try {
    if (config.get<string>('model.provider') === 'openai-compatible') {
      const apiKey = process.env.OPENAI_API_KEY?.trim();
      return port.createProvider(
        {
          provider: 'openai-compatible',
          baseUrl: config.get<string>('model.openaiCompatible.baseUrl') ?? '',
          model: config.get<string>('model.openaiCompatible.model') ?? '',
          ...(apiKey ? { apiKey } : {}),
          ...common,
        },
        port.logger,
      );
    }
    const apiKey = (await port.geminiKey())?.trim() || process.env.GEMINI_API_KEY?.trim();
    if (!apiKey) {
      const choice = await vscode.window.showErrorMessage(
        `${feature} needs a Gemini API key, and none is set. Get one at https://aistudio.google.com/apikey, or choose an OpenAI-compatible endpoint in the postgresAgent.model.provider setting.`,
        'Set Gemini API Key…',
      );
      if (choice) await vscode.commands.executeCommand('postgresAgent.setGeminiApiKey');
      return undefined;
    }
    const baseUrl = process.env.PGAGENT_GEMINI_BASE_URL?.trim();
    return port.createProvider(
      {
        provider: 'gemini',
        model: config.get<string>('model.gemini.model') ?? '',
        apiKey,
        ...(baseUrl ? { baseUrl } : {}),
        ...common,
      },
      port.logger,
    );
  } catch (error) {
    const e = port.toAgentError(error);
    void vscode.window
      .showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message, 'Open Settings')
      .then((choice) => {
        if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'postgresAgent.model');
      });
    return undefined;
  }
}

/**
 * The embedding model (postgresAgent.model.embeddingModel) of the configured provider, or undefined when
 * none is named or the provider is not usable; never asks the person anything (words are the fallback).
 */
export async function configuredEmbedder(port: ModelProviderPort): Promise<Embedder | undefined> {
  const config = vscode.workspace.getConfiguration('postgresAgent');
  const embeddingModel = config.get<string>('model.embeddingModel')?.trim();
  if (!embeddingModel) return undefined;
  if (config.get<string>('model.provider') === 'openai-compatible') {
    const apiKey = process.env.OPENAI_API_KEY?.trim();
    return port.createEmbedder(
      {
        provider: 'openai-compatible',
        baseUrl: config.get<string>('model.openaiCompatible.baseUrl') ?? '',
        ...(apiKey ? { apiKey } : {}),
        embeddingModel,
      },
      port.logger,
    );
  }
  const apiKey = (await port.geminiKey())?.trim() || process.env.GEMINI_API_KEY?.trim();
  const baseUrl = process.env.PGAGENT_GEMINI_BASE_URL?.trim();
  return port.createEmbedder(
    { provider: 'gemini', ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}), embeddingModel },
    port.logger,
  );
}

/** The provider with a Cancel button's signal on every call (an aborted call is never retried). */
export function withSignal(provider: LlmProvider, signal: AbortSignal): LlmProvider {
  return {
    name: provider.name,
    model: provider.model,
    complete: (req) => provider.complete({ ...req, signal }),
    stream: (req, onText) => provider.stream({ ...req, signal }, onText),
  };
}
