/**
 * The review chat of a job in VS Code: a message goes to the core's review chat with the configured
 * model; the reply streams into the panel state (pushes are throttled by the controller); plan edits the
 * chat proposes are applied or discarded on the person's click. A failed message comes back to its box.
 */
import * as vscode from 'vscode';
import type { Db } from '../../core/db/db';
import type { Logger } from '../../core/platform/logger';
import type { DatabaseSession } from '../connection/databaseSession';
import { actor } from './jobRunners';
import type { JobRunners } from './jobRunners';
import type { JobLocalState } from './cockpit/jobView';
import type { CoreServices } from '../lazyServices';
import type { ModelProviderPort } from '../settings/modelProvider';
import { configuredEmbedder, configuredProvider } from '../settings/modelProvider';

/** The core's review chat and the configured model, loaded when called (host/compose/jobsPort.ts). */
export interface JobChatPort
  extends ModelProviderPort, Pick<CoreServices, 'sendReviewMessage' | 'applyPlanEdit' | 'discardPlanEdit'> {}

export interface JobChatDeps {
  port: JobChatPort;
  runners: JobRunners;
  session: DatabaseSession;
  logger: Logger;
  local(jobId: string): JobLocalState;
  setLocal(jobId: string, change: Partial<JobLocalState>): void;
  refresh(): Promise<void>;
  fail(jobId: string, error: unknown): void;
}

export class JobChat implements vscode.Disposable {
  private readonly turns = new Map<string, AbortController>();

  constructor(private readonly deps: JobChatDeps) {}

  /** A reply is being written for this job. */
  answering(jobId: string): boolean {
    return this.turns.has(jobId);
  }

  stop(jobId: string): void {
    this.turns.get(jobId)?.abort();
  }

  async send(jobId: string, text: string, debug: boolean): Promise<void> {
    if (this.turns.has(jobId)) {
      void vscode.window.showInformationMessage('The review chat is still answering your last message.');
      return;
    }
    // Claimed before the first await: a second quick send finds the turn already going.
    const abort = new AbortController();
    this.turns.set(jobId, abort);
    const provider = await configuredProvider(this.deps.port, 'The review chat').catch((error: unknown) => {
      this.turns.delete(jobId);
      throw error;
    });
    if (!provider) {
      this.turns.delete(jobId);
      return;
    }
    this.deps.setLocal(jobId, { pendingChat: { text, reply: '' }, chatError: null });
    this.deps.logger.info('review chat message', { jobId, chars: text.length, debug });
    try {
      const config = vscode.workspace.getConfiguration('postgresAgent');
      // The research tier searches the schema only when a database is open; the chat never opens one.
      const loadSnapshot =
        this.deps.session.connection.status === 'connected' ? () => this.deps.session.loadSnapshot() : undefined;
      const embedder = await configuredEmbedder(this.deps.port);
      const store = this.deps.runners.store();
      const turnOn = (db: Db | undefined) =>
        this.deps.port.sendReviewMessage(
          {
            store,
            provider,
            ...(loadSnapshot ? { loadSnapshot } : {}),
            ...(db ? { db } : {}),
            ...(embedder ? { embedder } : {}),
            logger: this.deps.logger,
            modelTimeoutMs: config.get<number>('model.timeoutMs') ?? 60_000,
          },
          jobId,
          text,
          {
            signal: abort.signal,
            debug,
            onText: (delta) => {
              const pending = this.deps.local(jobId).pendingChat;
              if (pending)
                this.deps.setLocal(jobId, { pendingChat: { text: pending.text, reply: pending.reply + delta } });
            },
          },
        );
      // The DBA tools (dba tier) run on the open database only when it is the job's own; the pool stays open for the turn.
      const jobConnection = (await store.get(jobId)).connection;
      const turn = loadSnapshot
        ? await this.deps.session.use(({ db, key }) => turnOn(key === jobConnection ? db : undefined))
        : await turnOn(undefined);
      this.deps.logger.info('review chat replied', {
        jobId,
        tools: turn.tools.length,
        draft: turn.draftFeedback !== null,
        planEdit: turn.planEdit?.id ?? null,
        tiers: turn.tiers.join(','),
      });
    } catch (error) {
      if (!abort.signal.aborted) {
        const info = this.deps.port.toAgentError(error).toInfo();
        this.deps.logger.error('review chat failed', { jobId, code: info.code, error: info.message });
        this.deps.setLocal(jobId, { chatError: { text, error: info } });
      }
    } finally {
      this.turns.delete(jobId);
      this.deps.setLocal(jobId, { pendingChat: null });
      await this.deps.refresh();
    }
  }

  /** Applies (writes plan.md and commits it) or discards a plan edit the chat proposed. */
  async planEdit(jobId: string, editId: string, apply: boolean): Promise<void> {
    this.deps.setLocal(jobId, {
      busy: { action: 'planEdit', message: apply ? 'Applying the plan edit…' : 'Discarding the plan edit…' },
      error: null,
    });
    try {
      if (apply) await this.deps.port.applyPlanEdit(this.deps.runners.store(), jobId, editId, actor());
      else await this.deps.port.discardPlanEdit(this.deps.runners.store(), jobId, editId, actor());
      this.deps.logger.info(apply ? 'plan edit applied' : 'plan edit discarded', { jobId, edit: editId });
    } catch (error) {
      this.deps.fail(jobId, error);
    } finally {
      this.deps.setLocal(jobId, { busy: null });
      await this.deps.refresh();
    }
  }

  dispose(): void {
    for (const turn of this.turns.values()) turn.abort();
    this.turns.clear();
  }
}
