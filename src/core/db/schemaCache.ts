/**
 * Schema intelligence with a cache (introspect once, not per question or per step): memory, then Redis
 * (1 h TTL) when configured or files under .pgagent/; keyed by connection and database, stored per schema
 * (schemaCacheStore.ts). Freshness costs one tiny query: the catalog's activity counters, stored with the
 * index, must be unchanged; when they moved (or cannot be trusted) the per-schema versions decide, and only
 * the schemas whose version moved (and those pointing into them) are introspected again.
 * A process that needs one table reads the index and that table (`table()`), never the whole cache.
 * Invalidation is one event (schemaChanges.ts), scoped to the schemas that changed.
 * Redis failing never fails the request: the files serve it and a warning is logged.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import type { Logger } from '../platform/logger';
import type { Db, DbSession } from './db';
import { introspectSchema } from './introspect';
import { decodeSchema, decodeTable, encodeSchema, tableRange, type BlobDirectory } from './schemaBlob';
import { schemaChanges, type SchemaChange } from './schemaChanges';
import {
  blobId,
  FileBlobStore,
  RedisBlobStore,
  SCHEMA_CACHE_FORMAT,
  type SchemaBlobStore,
  type SchemaEntry,
  type SchemaIndex,
} from './schemaCacheStore';
import { catalogActivity, schemaVersions } from './schemaVersion';

export { SCHEMA_CACHE_TTL_SECONDS } from './schemaCacheStore';

/**
 * A safety net: while the activity counters stay the same, a full version check still runs this often
 * (statistics can be reset to the very same numbers in theory; in practice this never finds anything).
 */
export const FULL_CHECK_INTERVAL_MS = 10 * 60_000;

export type SchemaSource = 'redis' | 'memory' | 'file' | 'introspected';

export interface SchemaCacheOptions {
  /** A connected ioredis client, or undefined for memory + files. */
  redis?: Redis;
  /** Directory for the files (.pgagent/schema-cache); undefined keeps them in memory and Redis only. */
  dir?: string;
  prefix?: string;
  /** Attach sample values (postgresAgent.schema.sampleValues); cached apart from plain snapshots. */
  sampleValues?: boolean;
  logger: Logger;
}

/** One connection's entry as this process holds it. */
interface Held {
  index: SchemaIndex;
  /** Decoded schemas, filled as they are asked for. */
  decoded: Map<string, TableInfo[]>;
  /** Table directories read by one-table reads, with where the blob's body starts. */
  directories: Map<string, { directory: BlobDirectory; bodyAt: number }>;
  checkedAt: number;
  /** Where the index came from (its blobs are read there first). */
  source: SchemaSource;
}

export class SchemaCache {
  private readonly held = new Map<string, Held>();
  private readonly stores = new Map<string, SchemaBlobStore[]>();
  private readonly unsubscribe: () => void;

  constructor(private readonly options: SchemaCacheOptions) {
    this.unsubscribe = schemaChanges.subscribe((change) => this.onChange(change));
  }

  /** Stops listening to schema changes (the cache stays usable). */
  dispose(): void {
    this.unsubscribe();
  }

  /** The whole schema of `db`, from the cache when it is still current. */
  async get(db: Db, connectionKey: string): Promise<{ snapshot: SchemaSnapshot; source: SchemaSource }> {
    const { held, source } = await this.current(db, connectionKey);
    const tables: TableInfo[] = [];
    for (const schema of Object.keys(held.index.schemas).sort()) {
      for (const t of await this.tablesIn(db, connectionKey, held, schema)) tables.push(t);
    }
    return {
      snapshot: { database: held.index.database, serverVersion: held.index.serverVersion, tables },
      source,
    };
  }

  /** The schemas and their table counts (nothing decoded): what a tree shows before one is opened. */
  async schemas(db: Db, connectionKey: string): Promise<{ name: string; tables: number }[]> {
    const { held } = await this.current(db, connectionKey);
    return Object.entries(held.index.schemas)
      .map(([name, entry]) => ({ name, tables: entry.tables }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The tables of one schema (that schema decoded alone). */
  async tablesOf(db: Db, connectionKey: string, schema: string): Promise<TableInfo[]> {
    const { held } = await this.current(db, connectionKey);
    return held.index.schemas[schema] ? this.tablesIn(db, connectionKey, held, schema) : [];
  }

  /** One table, reading only the index, its schema's directory and its own bytes when not yet held. */
  async table(db: Db, connectionKey: string, schema: string, name: string): Promise<TableInfo | undefined> {
    const { held } = await this.current(db, connectionKey);
    const entry = held.index.schemas[schema];
    if (!entry) return undefined;
    const decoded = held.decoded.get(schema);
    if (decoded) return decoded.find((t) => t.name === name);
    for (const store of this.ordered(connectionKey, held)) {
      const found = await this.readOne(store, held, schema, entry, name).catch((error: unknown) => {
        this.warn('could not read a table from the cache', error);
        return undefined;
      });
      if (found !== undefined) return found === null ? undefined : found;
    }
    // The blob is gone (replaced meanwhile): read that schema again.
    return (await this.tablesOf(db, connectionKey, schema)).find((t) => t.name === name);
  }

  /** One table as a snapshot of its own (`pg-agent schema --table S.T --json`): database facts from the index. */
  async tableSnapshot(db: Db, connectionKey: string, schema: string, name: string): Promise<SchemaSnapshot> {
    const table = await this.table(db, connectionKey, schema, name);
    const index = this.held.get(connectionKey)?.index;
    return { database: index?.database ?? '', serverVersion: index?.serverVersion ?? '', tables: table ? [table] : [] };
  }

  /** Every byte the stores read so far (index and blobs), per connection: tests assert what a process read. */
  bytesRead(connectionKey: string): number {
    return (this.stores.get(connectionKey) ?? []).reduce((n, s) => n + s.bytesRead, 0);
  }

  /**
   * Forgets the named schemas of a connection (all of them when no scope is given) everywhere this cache keeps
   * them; the others' entries stay, and the next read checks every schema's version (an empty list: only that
   * check). Called through schemaChanges, or directly.
   */
  async invalidate(connectionKey: string, scope: { schemas?: readonly string[] } = {}): Promise<void> {
    const held = this.held.get(connectionKey);
    if (!scope.schemas) {
      this.held.delete(connectionKey);
      for (const store of this.storesFor(connectionKey)) {
        await store.removeIndex().catch((error: unknown) => this.warn('could not remove the cache index', error));
      }
      return;
    }
    const drop = (index: SchemaIndex): SchemaIndex => {
      const schemas = { ...index.schemas };
      for (const s of scope.schemas ?? []) delete schemas[s];
      return { ...index, activity: '', schemas };
    };
    if (held) {
      held.index = drop(held.index);
      for (const s of scope.schemas) held.decoded.delete(s);
      held.checkedAt = 0;
    }
    for (const store of this.storesFor(connectionKey)) {
      try {
        const stored = await store.readIndex();
        if (stored) await store.writeIndex(drop(stored));
      } catch (error) {
        this.warn('could not update the cache index', error);
      }
    }
  }

  private async onChange(change: SchemaChange): Promise<void> {
    if (change.everything) await this.invalidate(change.connection);
    else await this.invalidate(change.connection, { schemas: change.schemas ?? [] });
  }

  /** The index, current against the catalog: schemas that moved are introspected and stored again. */
  private async current(db: Db, connectionKey: string): Promise<{ held: Held; source: SchemaSource }> {
    return db.withSession(async (session) => {
      const activity = await catalogActivity(session);
      const trusted = activityTrusted(activity);
      const held = this.held.get(connectionKey);
      if (held && trusted && held.index.activity === activity && Date.now() - held.checkedAt < FULL_CHECK_INTERVAL_MS) {
        return { held, source: 'memory' as const };
      }
      let base = held;
      if (!base) {
        const stored = await this.readIndex(connectionKey);
        if (stored) base = { ...stored, decoded: new Map(), directories: new Map(), checkedAt: 0 };
        // A new process (CLI run, window) finds the entry of an earlier one: the counters alone say it is current.
        if (base && trusted && base.index.activity === activity) {
          base.checkedAt = Date.now();
          this.held.set(connectionKey, base);
          return { held: base, source: base.source };
        }
      }
      return this.refresh(session, db, connectionKey, base, activity, base === held);
    });
  }

  private async refresh(
    session: DbSession,
    db: Db,
    connectionKey: string,
    base: Held | undefined,
    activity: string,
    fromMemory: boolean,
  ): Promise<{ held: Held; source: SchemaSource }> {
    const versions = await schemaVersions(session);
    const old = base?.index.schemas ?? {};
    const changed = new Set<string>();
    for (const [schema, version] of versions) if (old[schema]?.version !== version) changed.add(schema);
    const gone = Object.keys(old).filter((s) => !versions.has(s));
    // A schema pointing into one that changed or went away names its tables: it is read again too.
    for (const [schema, entry] of Object.entries(old)) {
      if (versions.has(schema) && entry.refs.some((r) => changed.has(r) || gone.includes(r))) changed.add(schema);
    }
    const schemas: SchemaIndex['schemas'] = {};
    for (const [schema, entry] of Object.entries(old))
      if (versions.has(schema) && !changed.has(schema)) schemas[schema] = entry;
    const decoded = new Map([...(base?.decoded ?? [])].filter(([s]) => s in schemas));
    const directories = new Map([...(base?.directories ?? [])].filter(([s]) => s in schemas));
    let database = base?.index.database;
    let serverVersion = base?.index.serverVersion;
    if (changed.size > 0 || !base) {
      const snapshot = await introspectSchema(session, {
        schemas: [...changed],
        sampleValues: this.options.sampleValues === true,
      });
      database = snapshot.database;
      serverVersion = snapshot.serverVersion;
      const bySchema = new Map<string, TableInfo[]>([...changed].map((s) => [s, []]));
      for (const t of snapshot.tables) bySchema.get(t.schema)?.push(t);
      for (const [schema, tables] of bySchema) {
        const blob = encodeSchema(schema, tables);
        const id = blobId(blob);
        await this.putBlob(connectionKey, id, blob);
        const refs = new Set<string>();
        for (const t of tables) {
          for (const f of t.foreignKeys) if (f.references.schema !== schema) refs.add(f.references.schema);
          if (t.partitionOf && t.partitionOf.schema !== schema) refs.add(t.partitionOf.schema);
        }
        schemas[schema] = {
          directory: blob.readUInt32LE(0),
          version: versions.get(schema) ?? '',
          tables: tables.length,
          refs: [...refs],
          blob: id,
          bytes: blob.length,
        };
        decoded.set(schema, tables);
      }
      this.options.logger.info('schema introspected', {
        db: db.label,
        schemas: changed.size,
        tables: snapshot.tables.length,
        stale: base !== undefined,
      });
    }
    const index: SchemaIndex = {
      format: SCHEMA_CACHE_FORMAT,
      database: database ?? '',
      serverVersion: serverVersion ?? '',
      activity,
      schemas,
    };
    const introspected = changed.size > 0 || !base;
    if (introspected || base?.index.activity !== activity || gone.length > 0)
      await this.writeIndex(connectionKey, index);
    const source: SchemaSource = introspected ? 'introspected' : fromMemory ? 'memory' : (base?.source ?? 'memory');
    const held: Held = { index, decoded, directories, checkedAt: Date.now(), source: base?.source ?? 'memory' };
    this.held.set(connectionKey, held);
    return { held, source };
  }

  /** A schema's tables: decoded already, else its blob read whole (from where the index came first). */
  private async tablesIn(db: Db, connectionKey: string, held: Held, schema: string): Promise<TableInfo[]> {
    const known = held.decoded.get(schema);
    if (known) return known;
    const entry = held.index.schemas[schema];
    if (!entry) return [];
    for (const store of this.ordered(connectionKey, held)) {
      const blob = await store.blob(entry.blob).catch((error: unknown) => {
        this.warn('could not read a schema from the cache', error);
        return undefined;
      });
      if (!blob) continue;
      const tables = decodeSchema(schema, blob);
      held.decoded.set(schema, tables);
      return tables;
    }
    // Its blob is gone (an older index, or expired in Redis): that schema is read again from the catalog.
    await this.invalidate(connectionKey, { schemas: [schema] });
    const { held: again } = await this.current(db, connectionKey);
    return again.decoded.get(schema) ?? [];
  }

  /** One table from a blob by ranges: the directory (cached per schema), then its bytes. null: no such table. */
  private async readOne(
    store: SchemaBlobStore,
    held: Held,
    schema: string,
    entry: SchemaEntry,
    name: string,
  ): Promise<TableInfo | null | undefined> {
    const blob = entry.blob;
    let { directory, bodyAt } = held.directories.get(schema) ?? { directory: undefined, bodyAt: 0 };
    if (!directory) {
      const text = await store.range(blob, 4, 4 + entry.directory);
      if (!text || text.length !== entry.directory) return undefined;
      directory = JSON.parse(text.toString('utf8')) as BlobDirectory;
      bodyAt = 4 + entry.directory;
      held.directories.set(schema, { directory, bodyAt });
    }
    const range = tableRange(directory, name);
    if (!range) return null;
    const bytes = await store.range(blob, bodyAt + range.start, bodyAt + range.end);
    return bytes ? decodeTable(schema, bytes, directory) : undefined;
  }

  private storesFor(connectionKey: string): SchemaBlobStore[] {
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

  /** The stores, the one the index came from first. */
  private ordered(connectionKey: string, held: Held): SchemaBlobStore[] {
    const stores = this.storesFor(connectionKey);
    return [...stores.filter((s) => s.source === held.source), ...stores.filter((s) => s.source !== held.source)];
  }

  private async readIndex(connectionKey: string): Promise<{ index: SchemaIndex; source: SchemaSource } | undefined> {
    for (const store of this.storesFor(connectionKey)) {
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

  private async putBlob(connectionKey: string, id: string, blob: Buffer): Promise<void> {
    for (const store of this.storesFor(connectionKey)) {
      await store
        .putBlob(id, blob)
        .catch((error: unknown) => this.warn(`could not write to the ${store.source} cache`, error));
    }
  }

  private async writeIndex(connectionKey: string, index: SchemaIndex): Promise<void> {
    for (const store of this.storesFor(connectionKey)) {
      await store
        .writeIndex(index)
        .catch((error: unknown) => this.warn(`could not write to the ${store.source} cache`, error));
    }
  }

  private warn(message: string, error: unknown): void {
    this.options.logger.warn(`schema cache: ${message}`, { error: String(error) });
  }
}

/**
 * Counters that never moved (all zero) mean no statistics are kept (track_counts off, PGlite): they say
 * nothing, and the version decides every time.
 */
function activityTrusted(activity: string): boolean {
  return activity !== '' && activity.split('.').some((n) => n !== '0');
}
