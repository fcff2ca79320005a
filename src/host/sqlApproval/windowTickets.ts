/**
 * The window's ticket store (files in .pgagent/approvals, or Redis when postgresAgent.redisUrl is set) and the key
 * its decisions are signed with: one service per window, passed to everything that reads or decides tickets (the
 * inline approval, Ask…, jobs, the language-model tools, outside proposals). Opened on first use, never at activation.
 */
import type { SigningKey } from '../../core/approvals/approvalPath';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { Logger } from '../../core/platform/logger';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import { redisUrl } from '../settings/settings';

/** The core's ticket store and its resolver, loaded when called (host/compose/windowTicketsPort.ts). */
export type WindowTicketsPort = Pick<CoreServices, 'openTicketStore' | 'workspacePaths' | 'databaseResolver'>;

export class WindowTickets {
  private store: Promise<TicketStore> | undefined;

  constructor(
    private readonly port: WindowTicketsPort,
    private readonly session: DatabaseSession,
    /** Where .pgagent/ lives: the workspace folder, else the extension's storage. */
    private readonly rootDir: string,
    private readonly logger: Logger,
    /** The key this window's decisions are signed with (SecretStorage); none: unsigned, under the OS user name. */
    readonly signingKey: () => Promise<SigningKey | undefined> = () => Promise.resolve(undefined),
  ) {}

  /** The window's ticket store, shared by every feature of the window; a failed open (Redis down) is retried next time. */
  ticketStore(): Promise<TicketStore> {
    this.store ??= this.port
      .openTicketStore({
        ...(redisUrl() ? { redisUrl: redisUrl() } : {}),
        approvalsDir: this.port.workspacePaths(this.rootDir).approvals,
        logger: this.logger,
      })
      .then((store) => {
        // A ticket left EXECUTING by a crashed window or CLI is resolved from its database when it is read.
        store.setResolver(
          this.port.databaseResolver(async (connection) => {
            const { db, key } = await this.session.database();
            return key === connection ? db : undefined;
          }, this.logger),
        );
        return store;
      });
    this.store.catch(() => {
      this.store = undefined;
    });
    return this.store;
  }

  dispose(): void {
    void this.store?.then((s) => s.close()).catch(() => undefined);
  }
}
