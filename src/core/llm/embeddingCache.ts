/**
 * Embeddings computed once: by model and text (a hash of both), in memory and in a file (the schema's
 * beside the schema cache, a job's in `<job>/.index/`). A text that changed is embedded again, one that did
 * not never is, so a schema change re-embeds only the tables it touched. Questions are kept in memory only.
 * The file is JSON `{ "model", "vectors": { key: base64 Float32 } }`, merged with what another process
 * wrote meanwhile, and replaced whole (temp file and rename).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../fs/atomicWrite';
import type { Logger } from '../platform/logger';
import type { EmbedKind, Embedder } from './embeddings';
import { isErrno } from '../fs/errno';

interface StoredVectors {
  model: string;
  vectors: Record<string, string>;
}

export interface EmbeddingStats {
  /** Texts answered from memory or the file. */
  hits: number;
  /** Texts sent to the model. */
  embedded: number;
  /** Requests made to the model (one per embed call; the embedder batches inside). */
  calls: number;
}

export class EmbeddingCache {
  private readonly known = new Map<string, Float32Array>();
  private loaded = false;
  readonly stats: EmbeddingStats = { hits: 0, embedded: 0, calls: 0 };

  constructor(
    private readonly file: string,
    /** The model's client (replaced by a newer one for the same model: a new key or base URL). */
    public embedder: Embedder,
    private readonly logger: Logger,
  ) {}

  /** One vector per text, in order; only texts never embedded with this model are sent to it. */
  async vectorsFor(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    this.load();
    const keys = texts.map((text) => this.keyOf(kind, text));
    const missing = new Map<string, string>();
    keys.forEach((key, i) => {
      if (!this.known.has(key) && !missing.has(key)) missing.set(key, texts[i] ?? '');
    });
    this.stats.hits += texts.length - missing.size;
    if (missing.size > 0) {
      this.stats.calls += 1;
      this.stats.embedded += missing.size;
      const vectors = await this.embedder.embed([...missing.values()], { kind, ...(signal ? { signal } : {}) });
      [...missing.keys()].forEach((key, i) => {
        const vector = vectors[i];
        if (vector) this.known.set(key, vector);
      });
      if (kind === 'document') await this.save();
    }
    return keys.map((key) => this.known.get(key) ?? new Float32Array(0));
  }

  private keyOf(kind: EmbedKind, text: string): string {
    return `${kind === 'query' ? 'q' : 'd'}${createHash('sha1').update(this.embedder.model).update('\0').update(text).digest('base64url').slice(0, 22)}`;
  }

  private read(): StoredVectors | undefined {
    try {
      const stored = JSON.parse(readFileSync(this.file, 'utf8')) as StoredVectors;
      return stored.model === this.embedder.model && typeof stored.vectors === 'object' ? stored : undefined;
    } catch (error) {
      if (!isErrno(error, 'ENOENT'))
        this.logger.warn('the embedding cache could not be read; it is rebuilt', {
          file: this.file,
          error: String(error),
        });
      return undefined;
    }
  }

  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    for (const [key, data] of Object.entries(this.read()?.vectors ?? {})) this.known.set(key, decode(data));
  }

  private async save(): Promise<void> {
    const vectors: Record<string, string> = { ...(this.read()?.vectors ?? {}) };
    for (const [key, vector] of this.known) if (key.startsWith('d')) vectors[key] ??= encode(vector);
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      await writeFileAtomic(this.file, JSON.stringify({ model: this.embedder.model, vectors } satisfies StoredVectors));
    } catch (error) {
      this.logger.warn('the embedding cache could not be written; the vectors are kept in memory', {
        file: this.file,
        error: String(error),
      });
    }
  }
}

function encode(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

function decode(data: string): Float32Array {
  const bytes = Buffer.from(data, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

const shared = new Map<string, EmbeddingCache>();

/** The process's one cache for `file` and this embedder's model (every ask and job of a workspace shares it). */
export function sharedEmbeddingCache(file: string, embedder: Embedder, logger: Logger): EmbeddingCache {
  const key = `${file}\0${embedder.provider}\0${embedder.model}`;
  const cache = shared.get(key);
  if (cache) {
    cache.embedder = embedder;
    return cache;
  }
  const created = new EmbeddingCache(file, embedder, logger);
  shared.set(key, created);
  return created;
}
