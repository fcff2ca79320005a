/**
 * "Ask…" in VS Code (UX.md "Ask"): a question in plain words runs the core's ask graph on the active
 * database; the answer goes to the panel, a write to the inline approval (sqlApproval/), which hands the
 * approved ticket back to the run so that the run, and only the run, executes it.
 */
import * as vscode from 'vscode';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import type { AskOutcome } from '../../core/ask/askRun';
import type { AskDeps } from '../../core/ask/deps';
import type { AskGraph } from '../../core/ask/graph';
import type { Embedder } from '../../core/llm/embeddings';
import type { LlmProvider } from '../../core/llm/provider';
import type { AgentError } from '../../core/platform/errors';
import type { SafetySettings } from '../../core/sql/safetySettings';
import { passwordsAsVerifiers } from '../../core/sql/secrets/textPasswords';
import type { ErrorCode } from '../../shared/errorCodes';
import { ASK_ID_PATTERN } from '../../shared/ids';
import type { AnswerStatus, AnswerView, ResultsView } from '../../shared/protocol';
import type { FeatureDeps } from '../featureDeps';
import type { CoreServices } from '../lazyServices';
import { withSignal } from '../settings/modelProvider';
import type { HeldWriteOwner } from '../sqlApproval/approvalEntries';
import { throttle } from '../../shared/throttle';

const RECENT_KEY = 'postgresAgent.recentQuestions';
const RECENT_KEPT = 10;

/** The step shown once a node has finished (UX: "Reading schema… Writing SQL… Checking… Running…"). */
const NEXT_STEP: Partial<Record<string, string>> = {
  extractIntent: 'Reading schema…',
  gatherContext: 'Writing SQL…',
  buildSql: 'Checking…',
  repairSql: 'Checking…',
  validateSql: 'Running…',
  runRead: 'Summarizing…',
  previewWrite: 'Holding the write for your approval…',
};

/** What Ask… needs of the core and the settings (host/compose/askPort.ts). */
export interface AskPort extends Pick<
  CoreServices,
  | 'newThreadId'
  | 'readOutcome'
  | 'resumeAsk'
  | 'toAgentError'
  | 'workspacePaths'
  | 'saveImpactReport'
  | 'fileAuditLog'
  | 'sharedEmbeddingCache'
> {
  /** The ask graph, checkpointed in `checkpointsDir` (core/ask/graph.ts, fileCheckpointer.ts). */
  askGraph(deps: AskDeps, checkpointsDir: string): AskGraph;
  agentError(code: ErrorCode, message: string, advice?: string): AgentError;
  /** The safety settings in force for the workspace. */
  safetySettings(): Promise<SafetySettings>;
  /** The configured model, or undefined after telling the person what is missing (settings/modelProvider.ts). */
  configuredProvider(feature: string): Promise<LlmProvider | undefined>;
  configuredEmbedder(): Promise<Embedder | undefined>;
}

export class AskController {
  private answer: AnswerView | null = null;
  private readonly rowsShown = new vscode.EventEmitter<{ threadId: string; question: string; results: ResultsView }>();
  /** An answer's rows (the results view opens them). */
  readonly onDidShowRows = this.rowsShown.event;
  /** Pushes to the panel, at most every 100 ms while a summary streams in (like a job's pushes). */
  private readonly push = throttle(() => this.deps.onChange(), 100);
  private restored: Promise<void> | undefined;

  constructor(
    private readonly deps: FeatureDeps,
    private readonly port: AskPort,
  ) {}

  view(): AnswerView | null {
    return this.answer;
  }

  /** The palette command: pick or type a question, then run it with progress and Cancel. */
  /** `prefill`: the start of a question (the schema explorer's "Ask about this table"). */
  async ask(prefill?: string): Promise<void> {
    const typed = await this.pickQuestion(prefill);
    if (!typed) return;
    // Kept in the recent list, the panel and the run's files: a password typed in it is kept as its verifier.
    const question = passwordsAsVerifiers(typed);
    const provider = await this.port.configuredProvider('Ask…');
    if (!provider) return;
    await this.remember(question);
    const threadId = this.port.newThreadId();
    this.setAnswer({
      threadId,
      question,
      status: 'running',
      sql: null,
      results: null,
      summary: null,
      executedRows: null,
      usage: { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
      error: null,
    });
    await this.deps.showPanel();
    const abort = new AbortController();
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Postgres Agent', cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          progress.report({ message: 'Reading schema…' });
          // The summary grows in the panel as the model writes it.
          const graph = await this.graph(withSignal(provider, abort.signal), (delta) =>
            this.update(threadId, { summary: `${this.answer?.summary ?? ''}${delta}` }),
          );
          const stream = await graph.stream(
            { question },
            { configurable: { thread_id: threadId }, streamMode: 'updates', signal: abort.signal },
          );
          for await (const update of stream) {
            for (const node of Object.keys(update)) {
              const next = NEXT_STEP[node];
              if (next) progress.report({ message: next });
            }
          }
          return this.port.readOutcome(graph, threadId);
        },
      );
      this.show(outcome);
      if (outcome.status === 'held') await this.handOver(outcome);
    } catch (error) {
      if (abort.signal.aborted) {
        this.update(threadId, { status: 'cancelled' });
        return;
      }
      const info = this.port.toAgentError(error).toInfo();
      this.deps.logger.error('ask failed', { thread: threadId, code: info.code, error: info.message });
      this.update(threadId, { status: 'failed', error: info });
      void vscode.window.showErrorMessage(info.advice ? `${info.message} ${info.advice}` : info.message);
    }
  }

  /** The answer's SQL to the clipboard (the host's copy, never text from the webview). */
  async copySql(): Promise<void> {
    const sql = this.answer?.sql ?? null;
    if (sql === null) return;
    await vscode.env.clipboard.writeText(sql);
    void vscode.window.setStatusBarMessage('Postgres Agent: SQL copied', 3000);
  }

  async openSql(): Promise<void> {
    const sql = this.answer?.sql ?? null;
    if (sql === null) return;
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: sql });
    await vscode.window.showTextDocument(document, { preview: false });
  }

  /**
   * Once per window, when the panel is first shown: ask runs held at the approval step (a window reload
   * in between) get their CodeLens and card back, so they can still be approved.
   */
  restoreHeld(): Promise<void> {
    this.restored ??= this.findHeld().catch((error: unknown) => {
      this.deps.logger.warn('could not restore held ask runs', { error: String(error) });
    });
    return this.restored;
  }

  private async findHeld(): Promise<void> {
    const dir = this.port.workspacePaths(this.deps.rootDir).checkpoints;
    const threads = (await readdir(dir).catch(() => [] as string[])).filter((name) => ASK_ID_PATTERN.test(name));
    if (threads.length === 0) return;
    const graph = await this.graph(undefined);
    const store = await this.deps.tickets.ticketStore();
    for (const threadId of threads) {
      const outcome = await this.port.readOutcome(graph, threadId).catch((error: unknown) => {
        this.deps.logger.warn('an ask run could not be read back; its write (if any) is not restored', {
          thread: threadId,
          error: this.port.toAgentError(error).message,
        });
        return undefined;
      });
      const ticketId = outcome?.state.ticketId;
      if (outcome?.status !== 'held' || !ticketId) continue;
      const ticket = await store.get(ticketId);
      if (ticket?.status !== 'PENDING_APPROVAL') continue;
      this.deps.logger.info('restoring a held ask run', { thread: threadId, ticket: ticketId });
      await this.handOver(outcome, false);
    }
  }

  /** The write goes to the inline approval: its SQL in .pgagent/runs/<thread>/query.sql with the CodeLens. */
  private async handOver(outcome: AskOutcome, open = true): Promise<void> {
    const { state, threadId } = outcome;
    const sql = state.sql ?? '';
    if (!state.ticketId || !state.impact) return;
    const ticketId = state.ticketId;
    const paths = this.port.workspacePaths(this.deps.rootDir);
    const file = join(paths.runs, threadId, 'query.sql');
    await mkdir(join(paths.runs, threadId), { recursive: true });
    await writeFile(file, `${sql}\n`);
    const store = await this.deps.tickets.ticketStore();
    const ticket = await store.get(ticketId);
    if (ticket) await this.port.saveImpactReport(paths.impact, ticket);
    const { key } = await this.deps.session.database();
    const owner: HeldWriteOwner = {
      execute: async () => {
        const done = await this.port.resumeAsk(
          await this.graph(undefined),
          await this.deps.tickets.ticketStore(),
          threadId,
        );
        this.show(done);
        const execution = done.state.execution;
        if (done.state.error)
          throw this.port.agentError(done.state.error.code, done.state.error.message, done.state.error.advice);
        if (!execution)
          throw this.port.agentError(
            'APPROVAL_NOT_APPROVED',
            `The ask run ${threadId} did not run the write (${done.status}).`,
          );
        return { rows: execution.rows, tables: execution.tables, undoFile: execution.undoFile };
      },
      rejected: async () => {
        this.show(
          await this.port.resumeAsk(await this.graph(undefined), await this.deps.tickets.ticketStore(), threadId),
        );
      },
    };
    const uri = vscode.Uri.file(file);
    this.deps.approval.track({
      ticketId,
      uri,
      start: 0,
      end: sql.length,
      sql,
      connection: key,
      impact: state.impact,
      owner,
    });
    if (open) {
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: false });
    }
  }

  /** The ask graph on the active database, checkpointed in .pgagent/checkpoints, tickets in the window's store. */
  private async graph(provider: LlmProvider | undefined, onSummaryText?: (delta: string) => void): Promise<AskGraph> {
    const { db, key } = await this.deps.session.database();
    const config = vscode.workspace.getConfiguration('postgresAgent');
    const paths = this.port.workspacePaths(this.deps.rootDir);
    const embedder = provider ? await this.port.configuredEmbedder() : undefined;
    const askDeps: AskDeps = {
      db,
      connectionKey: key,
      ticketStore: await this.deps.tickets.ticketStore(),
      provider,
      loadSnapshot: () => this.deps.session.loadSnapshot(),
      settings: await this.port.safetySettings(),
      logger: this.deps.logger,
      requestedBy: userInfo().username,
      audit: this.port.fileAuditLog(paths.runs),
      undoDir: paths.undo,
      contextBudgetTokens: config.get<number>('context.tokenBudget') ?? 6000,
      modelTimeoutMs: config.get<number>('model.timeoutMs') ?? 60_000,
      ...(onSummaryText ? { onSummaryText } : {}),
      ...(embedder
        ? {
            embeddings: this.port.sharedEmbeddingCache(
              join(paths.schemaCache, 'embeddings.json'),
              embedder,
              this.deps.logger,
            ),
          }
        : {}),
    };
    return this.port.askGraph(askDeps, paths.checkpoints);
  }

  /** A QuickPick of recent questions where typing a new one works: the typed text is the first item. */
  private pickQuestion(prefill?: string): Promise<string | undefined> {
    const recent = this.deps.workspaceState.get<string[]>(RECENT_KEY, []);
    const recentItems = recent.map((q): vscode.QuickPickItem => ({ label: q, description: 'recent' }));
    const pick = vscode.window.createQuickPick();
    pick.title = 'Postgres Agent: Ask…';
    pick.placeholder =
      recent.length > 0
        ? 'Ask about the database in plain words, or pick a recent question'
        : 'Ask about the database in plain words, e.g. how many orders were placed last week?';
    pick.ignoreFocusOut = true;
    pick.items = recentItems;
    if (prefill) {
      pick.value = prefill;
      pick.items = [{ label: prefill, description: 'ask' }, ...recentItems];
    }
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: string | undefined) => {
        if (done) return;
        done = true;
        resolve(value);
        pick.dispose();
      };
      pick.onDidChangeValue((value) => {
        const typed = value.trim();
        pick.items =
          typed && !recent.includes(typed) ? [{ label: typed, description: 'ask' }, ...recentItems] : recentItems;
      });
      pick.onDidAccept(() => {
        const chosen = pick.selectedItems[0]?.label ?? pick.activeItems[0]?.label ?? pick.value;
        finish(chosen.trim() || undefined);
      });
      pick.onDidHide(() => finish(undefined));
      pick.show();
    });
  }

  private async remember(question: string): Promise<void> {
    const recent = this.deps.workspaceState.get<string[]>(RECENT_KEY, []);
    await this.deps.workspaceState.update(
      RECENT_KEY,
      [question, ...recent.filter((q) => q !== question)].slice(0, RECENT_KEPT),
    );
  }

  /** The panel's answer from where the run stopped. */
  private show(outcome: AskOutcome): void {
    const { state, threadId } = outcome;
    const status: AnswerStatus =
      outcome.status === 'done'
        ? state.execution
          ? 'executed'
          : 'answered'
        : outcome.status === 'held'
          ? 'held'
          : outcome.status;
    const r = state.result;
    this.setAnswer({
      threadId,
      question: state.question,
      status,
      sql: state.sql ?? null,
      results:
        r && state.sql
          ? {
              sql: state.sql,
              fields: r.fields,
              rows: r.rows,
              rowCount: r.rowCount,
              truncated: r.truncated,
              elapsedMs: r.elapsedMs,
            }
          : null,
      summary: state.summary ?? null,
      executedRows: state.execution?.rows ?? null,
      usage: state.usage,
      error: state.error ?? null,
    });
    if (state.error && outcome.status !== 'held')
      this.deps.logger.warn('ask stopped', { thread: threadId, code: state.error.code, error: state.error.message });
  }

  private update(threadId: string, change: Partial<AnswerView>): void {
    if (this.answer?.threadId !== threadId) return;
    this.setAnswer({ ...this.answer, ...change });
  }

  private setAnswer(answer: AnswerView): void {
    const newRows = answer.results !== null && answer.results !== this.answer?.results;
    this.answer = answer;
    this.push.request();
    if (newRows && answer.results)
      this.rowsShown.fire({ threadId: answer.threadId, question: answer.question, results: answer.results });
  }
}
