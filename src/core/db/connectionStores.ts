/**
 * The schema cache's stores of each connection (schemaCacheStore.ts): Redis first when configured, then the
 * files. Every operation tries each store and turns a store's failure into a logged warning: a cache that
 * cannot be read or written is a slower request, never a failed one.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { Logger } from '../platform/logger';
import {
  FileBlobStore,
  RedisBlobStore,
  type ConfirmedStamp,
  type SchemaBlobStore,
  type SchemaIndex,
} from './schemaCacheStore';

export interface ConnectionStoresOptions {
  redis?: Redis;
  dir?: string;
  prefix?: string;
  sampleValues?: boolean;
  logger: Logger;
}

export class ConnectionStores {
  private readonly stores = new Map<string, SchemaBlobStore[]>();

  constructor(private readonly options: ConnectionStoresOptions) {}

  of(connectionKey: string): SchemaBlobStore[] {
    let stores = this.stores.get(connectionKey);
    if (!stores) {
      const name = `${this.options.sampleValues ? 'samples:' : ''}${connectionKey}`;
      const hash = createHash('sha256').update(name).digest('hex').slice(0, 24);
      stores = [];
      if (this.options.redis) {
        const prefix = `${this.options.prefix ?? 'pgagent:'}schema${this.options.sampleValues ? '+samples' : ''}:${connectionKey}:`;
        stores.push(new RedisBlobStore(this.options.redis, prefix));
      }
      if (this.options.dir) stores.push(new FileBlobStore(join(this.options.dir, hash)));
      this.stores.set(connectionKey, stores);
    }
    return stores;
  }

  /** The stores, the one named first (where an index came from: its blobs are read there first). */
  ordered(connectionKey: string, first: SchemaBlobStore['source']): SchemaBlobStore[] {
    const stores = this.of(connectionKey);
    return [...stores.filter((s) => s.source === first), ...stores.filter((s) => s.source !== first)];
  }

  bytesRead(connectionKey: string): number {
    return (this.stores.get(connectionKey) ?? []).reduce((n, s) => n + s.bytesRead, 0);
  }

  async readIndex(
    connectionKey: string,
  ): Promise<{ index: SchemaIndex; source: SchemaBlobStore['source'] } | undefined> {
    for (const store of this.of(connectionKey)) {
      try {
        const index = await store.readIndex();
        if (index) return { index, source: store.source };
      } catch (error) {
        this.warn(
          store.source === 'redis' ? 'Redis unavailable, using the local cache' : 'could not read the cache index',
          error,
        );
      }
    }
    return undefined;
  }

  /** The first store's last confirmation and that store (undefined: none kept, or unreadable). */
  async readStamp(connectionKey: string): Promise<{ stamp: ConfirmedStamp; store: SchemaBlobStore } | undefined> {
    for (const store of this.of(connectionKey)) {
      try {
        const stamp = await store.readStamp();
        if (stamp) return { stamp, store };
      } catch (error) {
        this.warn('could not read the confirmation stamp', error);
      }
    }
    return undefined;
  }

  async writeStamp(connectionKey: string, stamp: ConfirmedStamp, ttlMs: number): Promise<void> {
    for (const store of this.of(connectionKey)) {
      await store
        .writeStamp(stamp, ttlMs)
        .catch((error: unknown) => this.warn(`could not write to the ${store.source} cache`, error));
    }
  }

  async putBlob(connectionKey: string, id: string, blob: Buffer): Promise<void> {
    for (const store of this.of(connectionKey)) {
      await store
        .putBlob(id, blob)
        .catch((error: unknown) => this.warn(`could not write to the ${store.source} cache`, error));
    }
  }

  async readDerived(connectionKey: string, name: string): Promise<Buffer | undefined> {
    for (const store of this.of(connectionKey)) {
      try {
        const data = await store.readDerived(name);
        if (data) return data;
      } catch (error) {
        this.warn('could not read derived data', error);
      }
    }
    return undefined;
  }

  async writeDerived(connectionKey: string, name: string, data: Buffer): Promise<void> {
    for (const store of this.of(connectionKey)) {
      await store
        .writeDerived(name, data)
        .catch((error: unknown) => this.warn(`could not write to the ${store.source} cache`, error));
    }
  }

  async writeIndex(connectionKey: string, index: SchemaIndex): Promise<void> {
    for (const store of this.of(connectionKey)) {
      await store
        .writeIndex(index)
        .catch((error: unknown) => this.warn(`could not write to the ${store.source} cache`, error));
    }
  }

  warn(message: string, error: unknown): void {
    this.options.logger.warn(`schema cache: ${message}`, { error: String(error) });
  }
}
