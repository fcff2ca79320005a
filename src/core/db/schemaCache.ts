/**
 * Schema intelligence with a cache (introspect once, not per question or per step): memory, then Redis
 * (1 h TTL) when configured or files under .pgagent/; keyed by connection and database, stored per schema
 * (schemaCacheStore.ts). Freshness costs one tiny query: the catalog's activity counters, stored with the
 * index, must be unchanged; when they moved (or cannot be trusted) the per-schema versions decide, and only
 * the schemas whose version moved (and those pointing into them) are introspected again.
 * A process that needs one table reads the index and that table (`table()`), never the whole cache; within
 * TRUST_FOR_MS of a confirmation by any process sharing the stores it asks the server nothing at all.
 * Invalidation is one event (schemaChanges.ts), scoped to the schemas that changed.
 * Redis failing never fails the request: the files serve it and a warning is logged.
 */
import type { Redis } from 'ioredis';
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import type { Logger } from '../platform/logger';
import type { Db, DbSession } from './db';
import { introspectSchema } from './introspect';
import { ConnectionStores } from './connectionStores';
import { directoryNames, readTable, type Directories } from './oneTableRead';
import { decodeSchema, encodeSchema } from './schemaBlob';
import { schemaChanges, type SchemaChange } from './schemaChanges';
import { blobId, SCHEMA_CACHE_FORMAT, type SchemaIndex } from './schemaCacheStore';
import { activityTrusted, catalogActivity, schemaVersions } from './schemaVersion';

export { SCHEMA_CACHE_TTL_SECONDS } from './schemaCacheStore';

/**
 * A safety net: while the activity counters stay the same, a full version check still runs this often
 * (statistics can be reset to the very same numbers in theory; in practice this never finds anything).
 */
export const FULL_CHECK_INTERVAL_MS = 10 * 60_000;

/**
 * How long a confirmation against the catalog is trusted by a one-table read (describe_table, `schema --table`)
 * in any process sharing the cache: within it, the read asks the server nothing (the stamp, the index, the
 * table's bytes: well under 5 ms in a fresh process; the one round trip of the check costs more than all of
 * that on a busy server). The decision, written down: agent-made DDL is exact regardless (its announcement
 * blanks the index's activity, so no stamp matches it any more); a change made outside the agent is seen at
 * most this late by a one-table read, which is of the order of the lag of the activity counters the check
 * itself reads (a session's statistics reach the others up to a second after it goes idle). Whole-schema
 * reads (context, the tree, diff) always check. SchemaCache's own default is 0 (always check);
 * openSchemaCache, which the CLI, MCP and the window use, passes this.
 */
export const TRUST_FOR_MS = 2000;

export type SchemaSource = 'redis' | 'memory' | 'file' | 'introspected';

export interface SchemaCacheOptions {
  /** A connected ioredis client, or undefined for memory + files. */
  redis?: Redis;
  /** Directory for the files (.pgagent/schema-cache); undefined keeps them in memory and Redis only. */
  dir?: string;
  prefix?: string;
  /** Attach sample values (postgresAgent.schema.sampleValues); cached apart from plain snapshots. */
  sampleValues?: boolean;
  /** See TRUST_FOR_MS; 0 (the default): every read checks the catalog's activity first. */
  trustForMs?: number;
  logger: Logger;
}

export interface ConfirmedCache {
  contentId: string;
  /** Its schemas, sorted (the order get() gives the tables in). */
  schemas: string[];
  tablesOf(schema: string): Promise<TableInfo[]>;
  readDerived(name: string): Promise<Buffer | undefined>;
  writeDerived(name: string, data: Buffer): Promise<void>;
}

/** One connection's entry as this process holds it. */
interface Held {
  index: SchemaIndex;
  /** Decoded schemas, filled as they are asked for. */
  decoded: Map<string, TableInfo[]>;
  /** Table directories read by one-table reads, with where the blob's body starts. */
  directories: Directories;
  checkedAt: number;
  /** When the counters (or another process's stamp) last confirmed the index: the trust window runs from it. */
  confirmedAt?: number;
  /** Where the index came from (its blobs are read there first). */
  source: SchemaSource;
}

export class SchemaCache {
  private readonly held = new Map<string, Held>();
  private readonly stores: ConnectionStores;
  private readonly unsubscribe: () => void;
  /** When this process last wrote a confirmation stamp, per connection. */
  private readonly stamped = new Map<string, number>();

  constructor(private readonly options: SchemaCacheOptions) {
    this.stores = new ConnectionStores(options);
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
    return schemaCounts(held);
  }

  /**
   * The database's name, its table count and its first `limit` tables in schema order, on one confirmation: only
   * the schemas those tables are in are decoded (what a window opens with).
   */
  async firstTables(
    db: Db,
    connectionKey: string,
    limit: number,
  ): Promise<{ database: string; total: number; tables: TableInfo[] }> {
    const { held } = await this.current(db, connectionKey);
    const schemas = schemaCounts(held);
    const tables: TableInfo[] = [];
    for (const schema of schemas) {
      if (tables.length >= limit) break;
      const decoded = await this.tablesIn(db, connectionKey, held, schema.name);
      tables.push(...decoded.slice(0, limit - tables.length));
    }
    return { database: held.index.database, total: schemas.reduce((sum, s) => sum + s.tables, 0), tables };
  }

  /** The tables of one schema (that schema decoded alone). */
  async tablesOf(db: Db, connectionKey: string, schema: string): Promise<TableInfo[]> {
    const { held } = await this.current(db, connectionKey);
    return held.index.schemas[schema] ? this.tablesIn(db, connectionKey, held, schema) : [];
  }

  /** Every table's name per schema, from each schema's table directory alone (no table decoded): a search over names. */
  async tableNames(db: Db, connectionKey: string): Promise<{ schema: string; names: string[] }[]> {
    const { held } = await this.current(db, connectionKey);
    const stores = this.stores.ordered(connectionKey, held.source === 'redis' ? 'redis' : 'file');
    const result: { schema: string; names: string[] }[] = [];
    for (const [schema, entry] of Object.entries(held.index.schemas).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const decoded = async () => (await this.tablesIn(db, connectionKey, held, schema)).map((t) => t.name);
      result.push({ schema, names: await directoryNames(stores, held, schema, entry, decoded) });
    }
    return result;
  }

  /** One table, reading only the index, its schema's directory and its own bytes when not yet held. */
  async table(db: Db, connectionKey: string, schema: string, name: string): Promise<TableInfo | undefined> {
    const held = (await this.trusted(connectionKey)) ?? (await this.current(db, connectionKey)).held;
    const entry = held.index.schemas[schema];
    if (!entry) return undefined;
    const decoded = held.decoded.get(schema);
    if (decoded) return decoded.find((t) => t.name === name);
    for (const store of this.stores.ordered(connectionKey, held.source === 'redis' ? 'redis' : 'file')) {
      const found = await readTable(store, held.directories, schema, entry, name).catch((error: unknown) => {
        this.stores.warn('could not read a table from the cache', error);
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

  /**
   * The cache as confirmed now, for a reader of several schemas of one version (the stored linking index): the id
   * of its content (every schema's blob), its schemas' tables with no further check, and its derived data.
   */
  async confirmed(db: Db, connectionKey: string): Promise<ConfirmedCache> {
    const { held } = await this.current(db, connectionKey);
    const ids = Object.entries(held.index.schemas).map(([schema, entry]) => `${schema}:${entry.blob}`);
    return {
      contentId: blobId(Buffer.from(ids.sort().join('\n'))),
      schemas: Object.keys(held.index.schemas).sort(),
      tablesOf: (schema) =>
        held.index.schemas[schema] ? this.tablesIn(db, connectionKey, held, schema) : Promise.resolve([]),
      readDerived: (name) => this.stores.readDerived(connectionKey, name),
      writeDerived: (name, data) => this.stores.writeDerived(connectionKey, name, data),
    };
  }

  /** Every byte the stores read so far (index and blobs), per connection: tests assert what a process read. */
  bytesRead(connectionKey: string): number {
    return this.stores.bytesRead(connectionKey);
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
      for (const store of this.stores.of(connectionKey)) {
        await store
          .removeIndex()
          .catch((error: unknown) => this.stores.warn('could not remove the cache index', error));
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
    for (const store of this.stores.of(connectionKey)) {
      try {
        const stored = await store.readIndex();
        if (stored) await store.writeIndex(drop(stored));
      } catch (error) {
        this.stores.warn('could not update the cache index', error);
      }
    }
  }

  private async onChange(change: SchemaChange): Promise<void> {
    if (change.everything) await this.invalidate(change.connection);
    else await this.invalidate(change.connection, { schemas: change.schemas ?? [] });
  }

  /**
   * The index when a confirmation within the trust window vouches for it (this process's, or a stamp another
   * left): no query. Undefined: ask the catalog.
   */
  private async trusted(connectionKey: string): Promise<Held | undefined> {
    const window = this.options.trustForMs ?? 0;
    if (window <= 0) return undefined;
    const within = (at: number) => Date.now() - at < window && at <= Date.now();
    const held = this.held.get(connectionKey);
    if (held && held.index.activity !== '' && within(held.confirmedAt ?? 0)) return held;
    const found = await this.stores.readStamp(connectionKey);
    if (!found || !within(found.stamp.at) || !activityTrusted(found.stamp.activity)) return undefined;
    if (held && held.index.activity === found.stamp.activity) {
      held.confirmedAt = found.stamp.at;
      return held;
    }
    const index = await found.store.readIndex().catch((error: unknown) => {
      this.stores.warn('could not read the cache index', error);
      return undefined;
    });
    if (!index || index.activity !== found.stamp.activity) return undefined;
    const fresh: Held = {
      index,
      decoded: new Map(),
      directories: new Map(),
      checkedAt: 0,
      confirmedAt: found.stamp.at,
      source: found.store.source,
    };
    this.held.set(connectionKey, fresh);
    return fresh;
  }

  /** Leaves a confirmation for the one-table reads of every process sharing the stores (at most twice a window). */
  private async stamp(connectionKey: string, activity: string, at: number): Promise<void> {
    const window = this.options.trustForMs ?? 0;
    if (window <= 0 || !activityTrusted(activity)) return;
    if (at - (this.stamped.get(connectionKey) ?? 0) < window / 2) return;
    this.stamped.set(connectionKey, at);
    await this.stores.writeStamp(connectionKey, { activity, at }, window);
  }

  /** The index, current against the catalog: schemas that moved are introspected and stored again. */
  private async current(db: Db, connectionKey: string): Promise<{ held: Held; source: SchemaSource }> {
    const at = Date.now(); // the counters are read after this: the confirmation holds from here
    const confirmed = await this.confirm(db, connectionKey);
    confirmed.held.confirmedAt = at;
    await this.stamp(connectionKey, confirmed.held.index.activity, at);
    return confirmed;
  }

  private async confirm(db: Db, connectionKey: string): Promise<{ held: Held; source: SchemaSource }> {
    return db.withSession(async (session) => {
      const activity = await catalogActivity(session);
      const trusted = activityTrusted(activity);
      const held = this.held.get(connectionKey);
      if (held && trusted && held.index.activity === activity && Date.now() - held.checkedAt < FULL_CHECK_INTERVAL_MS) {
        return { held, source: 'memory' as const };
      }
      let base = held;
      if (!base) {
        const stored = await this.stores.readIndex(connectionKey);
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
        await this.stores.putBlob(connectionKey, id, blob);
        const refs = new Set<string>();
        for (const t of tables) {
          for (const f of t.foreignKeys) if (f.references.schema !== schema) refs.add(f.references.schema);
          // Its tables name those pointing to them too (a rename there is not a change here).
          for (const f of t.referencedBy ?? []) if (f.schema !== schema) refs.add(f.schema);
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
      await this.stores.writeIndex(connectionKey, index);
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
    for (const store of this.stores.ordered(connectionKey, held.source === 'redis' ? 'redis' : 'file')) {
      const blob = await store.blob(entry.blob).catch((error: unknown) => {
        this.stores.warn('could not read a schema from the cache', error);
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
}

/** Each schema of the index with its table count, in name order. */
function schemaCounts(held: Held): { name: string; tables: number }[] {
  return Object.entries(held.index.schemas)
    .map(([name, entry]) => ({ name, tables: entry.tables }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
