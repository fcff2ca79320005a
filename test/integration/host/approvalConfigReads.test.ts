// One approval click at the inline approval, counted (issue 36): the same host code a CodeLens click runs
// (HeldWriteDecisions over the ports extension.ts builds, WindowTickets), driven in node on real PostgreSQL and real
// files; only VS Code's API is a stand-in (no user or workspace settings, a trusted workspace). Counted: every read
// of .pgagent/config.json and of the person's own config file. The settings in force are read once per action and
// passed on: to the run, to who signed, and to the claim's policy in force. Before: 3 reads per click, 5 when the
// decision came from elsewhere.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as FsPromisesModule from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const counted = vi.hoisted(() => ({ files: [] as string[] }));

// VS Code's API as the inline approval uses it here: events and notifications; no settings, trusted.
vi.mock('vscode', () => {
  class EventEmitter {
    private listeners: (() => void)[] = [];
    event = (l: () => void) => {
      this.listeners.push(l);
      return { dispose: () => undefined };
    };
    fire() {
      for (const l of this.listeners) l();
    }
    dispose() {
      this.listeners = [];
    }
  }
  return {
    EventEmitter,
    workspace: { isTrusted: true, getConfiguration: () => ({ get: () => undefined, inspect: () => undefined }) },
    window: {
      showWarningMessage: () => Promise.resolve(undefined),
      showInformationMessage: () => Promise.resolve(undefined),
      showErrorMessage: () => Promise.resolve(undefined),
    },
  };
});
// Every asynchronous file read of src/ (the config reader's, the ticket store's).
vi.mock('node:fs/promises', async (importOriginal) => {
  const { countingReads } = await import('../../support/countedReads');
  return countingReads(await importOriginal<typeof FsPromisesModule>(), 'readFile', counted.files);
});
// The loader's job is to load dist/services.js on first use; here the same module from source.
vi.mock('../../../src/host/lazyServices', async () => {
  const services = await import('../../../src/host/services');
  return { coreOnFirstUse: () => () => services };
});

import { FileTicketStore } from '../../../src/core/approvals/fileTicketStore';
import type { Ticket } from '../../../src/core/approvals/ticket';
import { parseConnectionUrl } from '../../../src/core/db/connectionTarget';
import type { Db } from '../../../src/core/db/db';
import { openPostgres } from '../../../src/core/db/postgresDb';
import { silentLogger } from '../../../src/core/platform/logger';
import type { DatabaseSession } from '../../../src/host/connection/databaseSession';
import { heldWriteDecisionsPort } from '../../../src/host/compose/heldWriteDecisionsPort';
import { settingsPort } from '../../../src/host/compose/settingsPort';
import { windowTicketsPort } from '../../../src/host/compose/sqlApprovalPorts';
import { coreOnFirstUse } from '../../../src/host/lazyServices';
import type { ApprovalEntry } from '../../../src/host/sqlApproval/approvalEntries';
import { ApprovalEntries } from '../../../src/host/sqlApproval/approvalEntries';
import { HeldWriteDecisions } from '../../../src/host/sqlApproval/heldWriteDecisions';
import { WindowTickets } from '../../../src/host/sqlApproval/windowTickets';
import { runPgAgent } from '../../support/cliHarness';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { SHOP_SCHEMA } from '../../support/shopSchema';

const core = coreOnFirstUse();

describe.runIf(postgresAvailable)('config reads per approval', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let workspace: string;
  let ownDir: string;
  let previousXdg: string | undefined;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, SHOP_SCHEMA);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-approval-reads-'));
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    writeFileSync(join(workspace, '.pgagent', 'config.json'), '{ "connections": [] }\n');
    ownDir = mkdtempSync(join(tmpdir(), 'pgagent-approval-own-'));
    mkdirSync(join(ownDir, 'pg-agent'));
    writeFileSync(join(ownDir, 'pg-agent', 'config.json'), '{ "connections": [] }\n');
    previousXdg = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = ownDir;
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
    if (previousXdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = previousXdg;
    rmSync(workspace, { recursive: true, force: true });
    rmSync(ownDir, { recursive: true, force: true });
  });

  /** A write held by `pg-agent sql` in the workspace (a person's own: this window runs it once approved). */
  async function held(sql: string): Promise<Ticket> {
    const run = await runPgAgent(['sql', '--db', scratch.url, '--no-input', '--workspace', workspace, '--', sql], {
      cwd: workspace,
      env: { XDG_CONFIG_HOME: ownDir, USER: 'tester' },
    });
    expect(run.code, run.stderr).toBe(3);
    const store = new FileTicketStore(join(workspace, '.pgagent', 'approvals'), { logger: silentLogger });
    const ticket = await store.get(/ticket (tkt_\w+)/.exec(run.stdout)?.[1] ?? '');
    await store.close();
    if (!ticket?.impact) throw new Error(`no held ticket: ${run.stdout}`);
    return ticket;
  }

  /** The window's inline approval parts, over the ports extension.ts builds, showing `ticket`'s card and lens. */
  function windowShowing(ticket: Ticket) {
    const session = { database: () => Promise.resolve({ db, key: scratch.url }) } as unknown as DatabaseSession;
    const tickets = new WindowTickets(windowTicketsPort(core), session, workspace, silentLogger);
    const entries = new ApprovalEntries();
    const decisions = new HeldWriteDecisions({
      port: heldWriteDecisionsPort(core, settingsPort(core), workspace),
      session,
      tickets,
      entries,
      logger: silentLogger,
      openUndo: () => Promise.resolve(),
    });
    const entry: ApprovalEntry = {
      ticketId: ticket.id,
      uri: { fsPath: join(workspace, 'held.sql') } as ApprovalEntry['uri'],
      start: 0,
      end: ticket.sql.length,
      sql: ticket.sql,
      connection: scratch.url,
      impact: ticket.impact,
      status: 'pending',
      watch: new AbortController(),
    };
    entries.add(entry);
    windows.push({ tickets, entries });
    return { tickets, entry, decisions };
  }
  const windows: { tickets: WindowTickets; entries: ApprovalEntries }[] = [];
  afterEach(() => {
    for (const w of windows.splice(0)) {
      w.entries.dispose();
      w.tickets.dispose();
    }
  });
  const count = (sql: string) => queryValue(scratch.url, sql).then(Number);
  const reads = () => ({
    workspace: counted.files.filter((p) => p === join(workspace, '.pgagent', 'config.json')).length,
    own: counted.files.filter((p) => p === join(ownDir, 'pg-agent', 'config.json')).length,
  });

  it('reads each config file once for a click that approves and runs the write', async () => {
    const w = windowShowing(await held('DELETE FROM order_items WHERE id = 1'));
    counted.files.length = 0;
    await w.decisions.decide(w.entry.ticketId, true);
    expect(w.entry.status, JSON.stringify(w.entry.error)).toBe('executed');
    expect(await count('SELECT count(*) FROM order_items WHERE id = 1')).toBe(0);
    expect(reads(), 'config reads of one approval click').toEqual({ workspace: 1, own: 1 });
    console.info(`approval click, config reads: ${JSON.stringify(reads())}`);
  });

  it('reads each config file once when the approval comes from elsewhere and the write runs here', async () => {
    const w = windowShowing(await held('DELETE FROM order_items WHERE id = 2'));
    w.decisions.watchForDecision(w.entry);
    // `pg-agent approvals approve` in a terminal: another store on the same folder decides the ticket.
    const terminal = new FileTicketStore(join(workspace, '.pgagent', 'approvals'), { logger: silentLogger });
    counted.files.length = 0;
    await terminal.decide(w.entry.ticketId, { approve: true, by: 'teammate' });
    await terminal.close();
    await expect.poll(() => w.entry.status, { timeout: 20_000 }).toBe('executed');
    expect(w.entry.decisions).toEqual([{ by: 'teammate', approve: true, signed: false }]);
    expect(await count('SELECT count(*) FROM order_items WHERE id = 2')).toBe(0);
    expect(reads(), 'config reads of one approval decided elsewhere').toEqual({ workspace: 1, own: 1 });
    console.info(`approval decided elsewhere, config reads: ${JSON.stringify(reads())}`);
  });

  it("enforces the workspace's policy as read for the click: the claim refuses, nothing runs, one read", async () => {
    const file = join(workspace, '.pgagent', 'config.json');
    writeFileSync(file, `${JSON.stringify({ connections: [], approval: { policy: { twoPersonAbove: 'none' } } })}\n`);
    try {
      const w = windowShowing(await held('DELETE FROM order_items WHERE id = 3'));
      counted.files.length = 0;
      await w.decisions.decide(w.entry.ticketId, true);
      expect(w.entry.status).toBe('failed');
      expect(w.entry.error?.code).toBe('APPROVAL_POLICY');
      expect(w.entry.error?.message).toContain(`required by ${file}`);
      expect(await count('SELECT count(*) FROM order_items WHERE id = 3')).toBe(1);
      expect(reads()).toEqual({ workspace: 1, own: 1 });
    } finally {
      writeFileSync(file, '{ "connections": [] }\n');
    }
  });
});
