/** What the ask graph's nodes are given from outside: database, tickets, model, schema, settings. */
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { AuditLog } from './audit';
import type { EmbeddingCache } from '../llm/embeddingCache';
import type { RunDeps } from './runDeps';

/** Without a provider, intent falls back to a static guess and SQL cannot be written. */
export interface AskDeps extends RunDeps {
  audit: AuditLog;
  /** Where undo scripts of the run's writes go (`.pgagent/undo`). */
  undoDir: string;
  /** Token budget of the schema context (default 6000). */
  contextBudgetTokens?: number;
  /** Time limit of one model call (default 60 s). */
  modelTimeoutMs?: number;
  /** Table embeddings, when an embedding model is configured: similarity by meaning joins the ranking. */
  embeddings?: EmbeddingCache;
  /** Receives the summary while the model writes it (streamed), so a UI can show it growing. */
  onSummaryText?: (delta: string) => void;
}

/** The thread id of the run (the checkpoint key), for audit records and logs. */
export function threadIdOf(config: LangGraphRunnableConfig | undefined): string {
  const id: unknown = config?.configurable?.thread_id;
  return typeof id === 'string' ? id : 'unknown';
}
