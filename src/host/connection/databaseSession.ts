/**
 * The database the window is working on: opened on first need (never at activation), its schema read
 * through the one schema cache every caller of the window shares (asks, jobs, review chat), and its
 * state published to the panel and the status bar.
 */
import * as vscode from 'vscode';
import type { ConnectionTarget } from '../../core/db/connectionTarget';
import type { Db, TunnelStatus } from '../../core/db/db';
import type { SchemaCache } from '../../core/db/schemaCache';
import type { Logger } from '../../core/platform/logger';
import type { SchemaSnapshot } from '../../shared/schema';
import type { ConnectionState, SchemaState, TableSummary } from '../../shared/protocol';
import { PANEL_TABLES } from '../../shared/protocol';
import type { ConnectionChoice, ConnectionStore } from './connectionStore';
import type { CoreServices } from '../lazyServices';
import { RetiringHolds } from './retiringHolds';
import type { HostSsh } from './sshHostPrompts';

/** What the session needs of the core and the window (host/compose/connectionPorts.ts). */
export interface DatabaseSessionPort extends Pick<
  CoreServices,
  'openDatabase' | 'connectionKey' | 'resolveTarget' | 'openSchemaCache' | 'toAgentError' | 'workspacePaths'
> {
  /** Tells every schema cache of the process that a schema changed (core/db/schemaChanges.ts, the one event). */
  announceSchemaChange: CoreServices['schemaChanges']['announce'];
  /** What an SSH tunnel of a profile asks of the person (sshHostPrompts.ts). */
  ssh(profile: string): HostSsh;
}

export class DatabaseSession implements vscode.Disposable {
  private db: Db | undefined;
  /** Password-free key of the open database (approval tickets are bound to it). */
  private key: string | undefined;
  /** Bumped on every (re)connect so a slow, superseded open cannot overwrite a newer one. */
  private generation = 0;
  /** The open under way, by its choice. */
  private opening: { key: string; done: Promise<void> } | undefined;
  private connectionState: ConnectionState = { status: 'none' };
  private schemaState: SchemaState = { status: 'idle' };
  private readonly changed = new vscode.EventEmitter<void>();
  /** One cache per sample-values setting (their snapshots differ), opened on first use. */
  private readonly schemaCaches = new Map<boolean, Promise<{ cache: SchemaCache; close(): Promise<void> }>>();
  /** Steps running on each open database (`use`): a database replaced under one is closed when they end. */
  private readonly holds = new RetiringHolds<Db>((db) =>
    db
      .close()
      .catch((error: unknown) => this.logger.warn('closing the previous database failed', { error: String(error) })),
  );
  readonly onDidChange = this.changed.event;
  private tunnelWatch: (() => void) | undefined;

  constructor(
    private readonly port: DatabaseSessionPort,
    private readonly store: ConnectionStore,
    private readonly logger: Logger,
    private readonly globalStorageDir: string,
  ) {}

  /** The open database's SSH tunnel, when it has one (the status bar says whether it is up). */
  get tunnel(): TunnelStatus | undefined {
    return this.db?.tunnel;
  }

  get connection(): ConnectionState {
    return this.connectionState;
  }

  get schema(): SchemaState {
    return this.schemaState;
  }

  /** Connects to the active choice unless already connected or connecting. */
  async ensureConnected(): Promise<void> {
    if (this.connectionState.status === 'none') await this.connect(this.store.active());
  }

  /**
   * Opens `choice`, replacing the current database, then loads its schema. Failures end in the state. A
   * second call for the choice being opened joins it (Open Sample Database and the panel appearing at the
   * same moment opened it twice, two restores racing).
   */
  connect(choice: ConnectionChoice): Promise<void> {
    const key = JSON.stringify(choice);
    if (this.opening?.key === key) return this.opening.done;
    const done = this.open(choice).finally(() => {
      if (this.opening?.done === done) this.opening = undefined;
    });
    this.opening = { key, done };
    return done;
  }

  private async open(choice: ConnectionChoice): Promise<void> {
    const generation = ++this.generation;
    const previous = this.db;
    this.db = undefined;
    this.key = undefined;
    // A job step or an ask still working on the previous database finishes there; it closes after them.
    const steps = previous ? await this.holds.retire(previous) : 0;
    if (steps > 0)
      this.logger.info('the previous database closes when its running steps end', { db: previous?.label, steps });

    const kind = choice.kind === 'sample' ? 'sample' : 'server';
    const label = choice.kind === 'sample' ? 'sample (PGlite)' : choice.name;
    this.update({ status: 'connecting', label, kind }, { status: 'loading' });
    const ssh = choice.kind === 'profile' ? this.port.ssh(choice.name) : undefined;
    try {
      const target = await this.target(choice);
      const db = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Postgres Agent: connecting to ${label}` },
        async (progress) =>
          this.port.openDatabase(target, {
            sampleDbDir: this.sampleDbDir(),
            logger: this.logger,
            onProgress: (message) => progress.report({ message }),
            sampleDbInWorker: true,
            sampleDbHeldBy: 'VS Code',
            // Long enough for a reloading window's previous extension host to close it.
            sampleDbWaitMs: 20_000,
            ...(ssh ? { ssh: ssh.options } : {}),
          }),
      );
      if (generation !== this.generation) {
        await db.close();
        return;
      }
      this.db = db;
      this.tunnelWatch?.();
      this.tunnelWatch = db.tunnel?.onState((state) => {
        this.logger.info('ssh tunnel', { route: db.tunnel?.route, state });
        this.changed.fire();
      });
      this.key = this.port.connectionKey(target, this.sampleDbDir());
      const listed = await this.panelTables(db, this.key);
      if (generation !== this.generation) return;
      this.update(
        { status: 'connected', label: db.label, kind, database: listed.database },
        { status: 'ready', tables: listed.tables, total: listed.total },
      );
      this.logger.info('schema loaded', { db: db.label, tables: listed.total });
    } catch (error) {
      if (generation !== this.generation) return;
      const info = this.port.toAgentError(error).toInfo();
      // A passphrase or password that did not log in is forgotten: the next try asks again.
      if (info.code === 'SSH_AUTH_FAILED') await ssh?.forget();
      this.logger.error('connection failed', { db: label, code: info.code, error: info.message });
      this.update({ status: 'failed', label, kind, error: info }, { status: 'failed', error: info });
      throw error;
    }
  }

  /** The open database (connecting to the active choice first if needed) and its connection key. */
  async database(): Promise<{ db: Db; key: string }> {
    if (!this.db || !this.key) await this.connect(this.store.active());
    if (!this.db || !this.key) throw new Error('The database closed while it was being opened; try again.');
    return { db: this.db, key: this.key };
  }

  /**
   * Runs `work` on the open database, which stays open until `work` ends even if the window switches
   * to another database meanwhile (a step is never cut off by a closed pool).
   */
  async use<T>(work: (open: { db: Db; key: string }) => Promise<T>): Promise<T> {
    const open = await this.database();
    return this.holds.use(open.db, () => work(open));
  }

  /** The open database's schema, from the shared cache (introspected only when it changed). */
  async loadSnapshot(): Promise<SchemaSnapshot> {
    const { db, key } = await this.database();
    return this.snapshotOf(db, key);
  }

  /** A person's Refresh: the open database's cached schema is forgotten everywhere (the one schema-change event). */
  async forgetSchema(): Promise<void> {
    if (!this.key) return;
    await this.port.announceSchemaChange({ connection: this.key, everything: true });
  }

  /** The open database's schema cache, for a reader of part of it (the Schema tree: the schemas, one schema's tables). */
  async schemaCache(): Promise<{ cache: SchemaCache; db: Db; key: string }> {
    const { db, key } = await this.database();
    return { cache: await this.cacheOf(), db, key };
  }

  /**
   * What the panel lists when a database opens: the first PANEL_TABLES tables, decoding only the schemas they are in
   * (50,000 tables are never all read to open a window; the Schema view pages through the rest).
   */
  private async panelTables(db: Db, key: string): Promise<{ database: string; tables: TableSummary[]; total: number }> {
    const { database, total, tables } = await (await this.cacheOf()).firstTables(db, key, PANEL_TABLES);
    return { database, total, tables: tables.map(toSummary) };
  }

  private async snapshotOf(db: Db, key: string): Promise<SchemaSnapshot> {
    const { snapshot, source } = await (await this.cacheOf()).get(db, key);
    this.logger.debug('schema loaded', { source });
    return snapshot;
  }

  /** The window's one schema cache for the current sample-values setting, opened on first use. */
  private async cacheOf(): Promise<SchemaCache> {
    const sampleValues =
      vscode.workspace.getConfiguration('postgresAgent').get<boolean>('schema.sampleValues') === true;
    let opened = this.schemaCaches.get(sampleValues);
    if (!opened) {
      const url = vscode.workspace.getConfiguration('postgresAgent').get<string>('redisUrl')?.trim();
      opened = this.port.openSchemaCache({
        ...(url ? { redisUrl: url } : {}),
        dir: this.port.workspacePaths(this.store.workspaceDir ?? this.globalStorageDir).schemaCache,
        sampleValues,
        logger: this.logger,
      });
      this.schemaCaches.set(sampleValues, opened);
    }
    return (await opened).cache;
  }

  /** Reconnects and reads the schema again from the catalog (the cache is emptied first). */
  async refreshSchema(): Promise<void> {
    await this.forgetSchema();
    await this.connect(this.store.active());
  }

  private async target(choice: ConnectionChoice): Promise<ConnectionTarget> {
    if (choice.kind === 'sample') return { kind: 'sample' };
    const password = await this.store.password(choice.name);
    return this.port.resolveTarget({
      profile: choice.name,
      profiles: await this.store.profiles(),
      ...(password ? { profilePassword: password } : {}),
      // The extension host's own PG* variables must not leak into a profile.
      env: {},
    });
  }

  /** The sample database lives in the workspace's .pgagent/ (or extension storage with no folder open). */
  private sampleDbDir(): string {
    return this.port.workspacePaths(this.store.workspaceDir || this.globalStorageDir).sampleDb;
  }

  private update(connection: ConnectionState, schema: SchemaState): void {
    this.connectionState = connection;
    this.schemaState = schema;
    this.changed.fire();
  }

  dispose(): void {
    this.generation++;
    this.tunnelWatch?.();
    void this.db?.close();
    void this.holds.closeAll();
    for (const opened of this.schemaCaches.values()) void opened.then((c) => c.close());
    this.changed.dispose();
  }
}

function toSummary(t: {
  schema: string;
  name: string;
  kind: TableSummary['kind'];
  rowEstimate: number | null;
  columns: unknown[];
  comment: string | null;
}): TableSummary {
  return {
    schema: t.schema,
    name: t.name,
    kind: t.kind,
    rowEstimate: t.rowEstimate,
    columnCount: t.columns.length,
    comment: t.comment,
  };
}
