/**
 * The models of a session: `--models gemini:NAME,openai:NAME` parsed into specs, and the two analysts
 * built from them (A = data/architecture, B = implementation/SQL), each with a fallback chain over the
 * other configured models. With one model, both perspectives come from it and are shown as such.
 */
import { AgentError } from '../platform/errors';
import type { LlmProvider } from '../llm/provider';
import type { Perspective } from './sessionTypes';

export interface ModelSpec {
  provider: 'gemini' | 'openai';
  model: string;
}

/** `provider:model` as shown to people and written to the session. */
export function specLabel(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

export function providerLabel(provider: LlmProvider): string {
  return `${provider.name === 'gemini' ? 'gemini' : 'openai'}:${provider.model}`;
}

/** "gemini:gemini-2.5-pro,openai:qwen2.5-coder" → specs; bad entries are bad input naming the entry. */
export function parseModelList(text: string): ModelSpec[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw badList(text, 'the list is empty');
  const specs = entries.map((entry): ModelSpec => {
    const colon = entry.indexOf(':');
    const provider = colon === -1 ? '' : entry.slice(0, colon).trim().toLowerCase();
    const model = colon === -1 ? '' : entry.slice(colon + 1).trim();
    if (provider !== 'gemini' && provider !== 'openai')
      throw badList(text, `"${entry}" does not start with gemini: or openai:`);
    if (model === '' || /\s/.test(model)) throw badList(text, `"${entry}" has no model name`);
    return { provider, model };
  });
  const seen = new Set<string>();
  for (const spec of specs) {
    if (seen.has(specLabel(spec))) throw badList(text, `${specLabel(spec)} is listed twice`);
    seen.add(specLabel(spec));
  }
  return specs;
}

function badList(text: string, why: string): AgentError {
  return new AgentError(
    'BAD_INPUT',
    `--models "${text.slice(0, 120)}" is not a model list: ${why}.`,
    'Use provider:model pairs separated by commas, e.g. gemini:gemini-2.5-pro,openai:qwen2.5-coder (openai = the endpoint at OPENAI_BASE_URL).',
  );
}

export interface Analyst {
  label: 'A' | 'B';
  perspective: Perspective;
  /** Tried in order: the analyst's own model first, then the others as fallbacks. */
  chain: LlmProvider[];
  /** Both analysts use the one configured model (two perspectives of the same model). */
  sameModel: boolean;
}

export function buildAnalysts(providers: readonly LlmProvider[]): [Analyst, Analyst] {
  const [first, ...rest] = providers;
  if (!first)
    throw new AgentError(
      'CONFIG_INVALID',
      'Collaborative planning needs at least one model.',
      'Pass --models, or set GEMINI_API_KEY or OPENAI_BASE_URL.',
    );
  if (rest.length === 0) {
    return [
      { label: 'A', perspective: 'data/architecture', chain: [first], sameModel: true },
      { label: 'B', perspective: 'implementation/SQL', chain: [first], sameModel: true },
    ];
  }
  const rotated = [...rest, first];
  return [
    { label: 'A', perspective: 'data/architecture', chain: [first, ...rest], sameModel: false },
    { label: 'B', perspective: 'implementation/SQL', chain: rotated, sameModel: false },
  ];
}
