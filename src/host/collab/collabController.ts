/**
 * "Plan with Several Models…": starts or reopens a collaborative planning session and runs its steps for
 * the session view — each with a cancellable progress notification; a failed or cancelled step keeps the
 * session as it was (the core records the error). Execute as job hands the plan to the jobs panel.
 */
import * as vscode from 'vscode';
import type { CollabDeps, CollabSessionRunner } from '../../core/collab/collabSession';
import type { CollabStore } from '../../core/collab/sessionStore';
import type { SessionState } from '../../core/collab/sessionTypes';
import type { LlmProvider } from '../../core/llm/provider';
import type { CollabIntent } from '../../shared/collabProtocol';
import { CollabPanel } from './collabPanel';
import { toSessionView } from './collabViewState';
import type { FeatureDeps } from '../featureDeps';
import type { JobRunners } from '../jobs/jobRunners';
import { actor } from '../jobs/jobRunners';
import { configuredProvider, withSignal } from '../settings/modelProvider';
import { settingsPort } from '../compose/settingsPort';
import { safetySettings } from '../settings/settings';

export const COLLAB_COMMAND_ID = 'postgresAgent.planWithSeveralModels';

export interface CollabControllerDeps extends FeatureDeps {
  extensionUri: vscode.Uri;
  /** Selects the job in the side panel and shows it. */
  openJob(jobId: string): Promise<void>;
  /** The window's job runner (host/jobs): Execute as job runs on it. */
  jobRunners: JobRunners;
}

export class CollabController implements vscode.Disposable {
  private readonly panel: CollabPanel;
  private collabStore: CollabStore | undefined;
  private running = false;

  constructor(private readonly deps: CollabControllerDeps) {
    this.panel = new CollabPanel(deps.extensionUri, (intent) => void this.handle(intent), deps.logger);
  }

  /** The palette command: a new session, or one of the workspace's sessions reopened. */
  async command(): Promise<void> {
    const sessions = await this.store().list();
    type Item = vscode.QuickPickItem & { id?: string };
    const items: Item[] = [
      {
        label: '$(add) New planning session…',
        detail:
          'Two analysts (or two perspectives of one model) discuss the task in rounds, checked against the database.',
      },
      ...sessions.map((s): Item => ({
        label: s.task.split('\n')[0] ?? s.id,
        description: `${s.phase} · round ${s.currentRound}`,
        detail: `${s.id} · ${s.models.join(', ')}`,
        id: s.id,
      })),
    ];
    const picked =
      sessions.length === 0
        ? items[0]
        : await vscode.window.showQuickPick(items, {
            title: 'Postgres Agent: Plan with Several Models',
            placeHolder: 'Start a session or open one',
          });
    if (!picked) return;
    if (picked.id) {
      await this.open(picked.id);
      return;
    }
    const task = await vscode.window.showInputBox({
      title: 'Postgres Agent: Plan with Several Models',
      prompt: 'The task to plan (the analysts see the relevant part of the database schema)',
      placeHolder: 'e.g. archive orders older than two years without blocking checkout',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'Describe the task first.' : undefined),
    });
    if (task === undefined) return;
    this.panel.update({ session: null, error: null, busy: 'Starting…' });
    this.panel.show();
    await this.step('Planning with several models', undefined, (runner) => runner.start({ task, by: actor() }));
  }

  async open(id: string): Promise<void> {
    this.panel.show();
    await this.refresh(id);
  }

  private async handle(intent: CollabIntent): Promise<void> {
    switch (intent.type) {
      case 'chooseOption':
        return this.decide(
          intent.sessionId,
          { kind: 'option', option: intent.option },
          `Writing the plan of option ${intent.option}`,
        );
      case 'clarify':
        return this.decide(intent.sessionId, { kind: 'clarify', text: intent.text }, 'Another round with your answer');
      case 'redirect':
        return this.decide(
          intent.sessionId,
          { kind: 'redirect', text: intent.text },
          'Starting over in the new direction',
        );
      case 'more':
        return this.decide(intent.sessionId, { kind: 'more' }, 'Another round of analysis');
      case 'execute':
        return this.execute(intent.sessionId);
      case 'openJob':
        return this.deps.openJob(intent.jobId);
      default: {
        const unexpected: never = intent;
        this.deps.logger.warn('unknown session view intent', { intent: JSON.stringify(unexpected) });
      }
    }
  }

  private async decide(
    id: string,
    decision: Parameters<CollabSessionRunner['decide']>[1],
    title: string,
  ): Promise<void> {
    const session = await this.store().get(id);
    await this.step(title, session, (runner) => runner.decide(id, decision, actor()));
  }

  private async execute(id: string): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const session = await this.store().get(id);
      // The window's job runner, bound to this one action.
      const { outcome } = await this.deps.jobRunners.withAction(
        session.connection,
        { provider: undefined, signal: new AbortController().signal, onEvent: () => this.deps.onChange() },
        (runner) => this.deps.core().executeAsJob(this.store(), runner, id, actor()),
      );
      await this.refresh(id);
      this.deps.onChange();
      await this.deps.openJob(outcome.job.id);
      void vscode.window.showInformationMessage(
        `Job "${outcome.job.title}" waits for the review of its plan; every write still needs its own approval.`,
      );
    } catch (error) {
      this.fail(error);
    } finally {
      this.running = false;
    }
  }

  /** One long step with a cancellable progress notification; the view follows each save of the session. */
  private async step(
    title: string,
    session: SessionState | undefined,
    run: (runner: CollabSessionRunner) => Promise<SessionState>,
  ): Promise<void> {
    if (this.running) {
      void vscode.window.showInformationMessage('A planning step is already running; wait for it or cancel it.');
      return;
    }
    this.running = true;
    let currentId = session?.id;
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress, token) => {
          const controller = new AbortController();
          token.onCancellationRequested(() => controller.abort(new Error('cancelled by the person')));
          const runner = await this.runner(session, controller.signal, {
            progress: (message) => {
              progress.report({ message });
              this.panel.update({ busy: message });
            },
            onSaved: (state) => {
              currentId = state.id;
              void this.refresh(state.id, true);
            },
          });
          if (!runner) return;
          this.panel.update({ busy: `${title}…`, error: null });
          await run(runner);
        },
      );
      if (currentId) await this.refresh(currentId);
      this.panel.update({ busy: null });
    } catch (error) {
      if (currentId)
        await this.refresh(currentId).catch((e: unknown) =>
          this.deps.logger.warn('could not read the session back', { error: String(e) }),
        );
      this.fail(error);
    } finally {
      this.running = false;
    }
  }

  private fail(error: unknown): void {
    const e = this.deps.core().toAgentError(error);
    const text = e.advice ? `${e.message} ${e.advice}` : e.message;
    this.panel.update({ busy: null, error: text });
    this.deps.logger.warn('planning session step failed', { code: e.code, error: e.message });
    void vscode.window.showErrorMessage(text);
  }

  private async refresh(id: string, keepBusy = false): Promise<void> {
    const view = await this.deps.core().readSessionView(this.store(), id);
    this.panel.update({ session: toSessionView(view), ...(keepBusy ? {} : { busy: null }) });
  }

  /** The runner on the window's database with the session's models (or, for a new one, the configured ones). */
  private async runner(
    session: SessionState | undefined,
    signal: AbortSignal,
    hooks: Pick<CollabDeps, 'progress' | 'onSaved'>,
  ): Promise<CollabSessionRunner | undefined> {
    const services = this.deps.core();
    const providers = await this.providers(session?.models, signal);
    if (!providers) return undefined;
    const { db, key } = await this.deps.session.database();
    return new services.CollabSessionRunner({
      store: this.store(),
      db,
      connectionKey: key,
      providers,
      loadSnapshot: () => this.deps.session.loadSnapshot(),
      settings: await safetySettings(settingsPort(this.deps.core), this.deps.rootDir),
      logger: this.deps.logger,
      signal,
      modelTimeoutMs: vscode.workspace.getConfiguration('postgresAgent').get<number>('model.timeoutMs') ?? 60_000,
      ...hooks,
    });
  }

  /** postgresAgent.collab.models (or the session's own), else the one configured model: two perspectives of it. */
  private async providers(
    sessionModels: readonly string[] | undefined,
    signal: AbortSignal,
  ): Promise<LlmProvider[] | undefined> {
    const services = this.deps.core();
    const config = vscode.workspace.getConfiguration('postgresAgent');
    const listed = sessionModels?.join(',') || config.get<string>('collab.models')?.trim();
    if (!listed) {
      const single = await configuredProvider(this.deps, 'Planning with several models');
      return single ? [withSignal(single, signal)] : undefined;
    }
    const geminiKey = (await this.deps.geminiKey())?.trim() || process.env.GEMINI_API_KEY?.trim();
    const geminiBase = process.env.PGAGENT_GEMINI_BASE_URL?.trim();
    const openAiBase =
      config.get<string>('model.openaiCompatible.baseUrl')?.trim() || process.env.OPENAI_BASE_URL?.trim();
    const openAiKey = process.env.OPENAI_API_KEY?.trim();
    return services.parseModelList(listed).map((spec) =>
      withSignal(
        spec.provider === 'gemini'
          ? services.createProvider(
              {
                provider: 'gemini',
                model: spec.model,
                ...(geminiKey ? { apiKey: geminiKey } : {}),
                ...(geminiBase ? { baseUrl: geminiBase } : {}),
                maxRetries: 1,
              },
              this.deps.logger,
            )
          : services.createProvider(
              {
                provider: 'openai-compatible',
                model: spec.model,
                baseUrl: openAiBase ?? '',
                ...(openAiKey ? { apiKey: openAiKey } : {}),
                maxRetries: 1,
              },
              this.deps.logger,
            ),
        signal,
      ),
    );
  }

  private store(): CollabStore {
    this.collabStore ??= new (this.deps.core().CollabStore)(this.deps.rootDir, { logger: this.deps.logger });
    return this.collabStore;
  }

  dispose(): void {
    this.panel.dispose();
  }
}
