/**
 * Composition root: builds the host services, registers the panel, commands and status bar, and owns
 * their disposal. Nothing heavy loads here: the database driver, PGlite and the parser live in
 * dist/services.js and are required on first use.
 */
import * as vscode from 'vscode';
import { join } from 'node:path';
import { ConnectionStore } from './host/connection/connectionStore';
import { DatabaseSession } from './host/connection/databaseSession';
import { AskController } from './host/ask/askController';
import { COLLAB_COMMAND_ID, CollabController } from './host/collab/collabController';
import { CockpitPanels } from './host/jobs/cockpit/cockpitPanels';
import type { CockpitState } from './shared/cockpitProtocol';
import { COMMAND_IDS, GEMINI_KEY_SECRET, registerCommands } from './host/commands';
import { ApprovalKeyStore } from './host/sqlApproval/approvalKey';
import type { FeatureDeps } from './host/featureDeps';
import { JobController } from './host/jobs/jobController';
import { registerLanguageModelTools } from './host/agents/languageModelTools';
import { LM_TOOL_PREFIX } from './host/agents/lmToolNames';
import { registerMcpServerDefinition } from './host/agents/mcpServerDefinition';
import { registerGuardEndpoint } from './host/agents/guardEndpoint';
import { OutsideProposals } from './host/agents/outsideProposals';
import { registerJobCommands } from './host/jobs/jobCommands';
import { outputLogger } from './host/ui/outputLogger';
import { logPolicyWarningsTo } from './host/settings/settings';
import { heldWriteDecisionsPort } from './host/compose/heldWriteDecisionsPort';
import { queryPlanPort, resultsPanelPort, schemaTreePort } from './host/compose/schemaPorts';
import { settingsPort } from './host/compose/settingsPort';
import { SIDE_PANEL_VIEW_ID, SidePanelProvider } from './host/ui/panelProvider';
import { QueryPlanView } from './host/schema/queryPlanView';
import { HealthView } from './host/dba/healthView';
import { registerAdviseIndexes } from './host/dba/adviseIndexesCommand';
import { registerCompareSchemas } from './host/diff/compareSchemasCommand';
import { compareSchemasPort } from './host/compose/compareSchemasPort';
import { registerQueryHistory } from './host/history/queryHistoryCommand';
import { HistoryView } from './host/history/historyView';
import { historyViewPort } from './host/compose/historyViewPort';
import { gridEditPort } from './host/compose/gridEditPort';
import { diagramPort } from './host/compose/diagramPort';
import { SchemaTreeView } from './host/schema/schemaTreeView';
import { ResultsPanel } from './host/schema/resultsPanel';
import { DiagramPanel } from './host/schema/diagramPanel';
import { GridEditing } from './host/schema/gridEditing';
import type { ResultsView } from './shared/protocol';
import { panelAnswer, rowsSummary, waitingView } from './host/ui/navigatorView';
import { RecentAsks } from './host/ask/recentAsks';
import { ApprovalsBadge } from './host/sqlApproval/approvalsBadge';
import { askResultKey, OPEN_ASK_RESULT_COMMAND, registerOpenAskResult } from './host/ask/openAskResult';
import type { PanelHost } from './host/ui/panelProvider';
import { showError } from './host/ui/showError';
import { InlineApproval } from './host/sqlApproval/inlineApproval';
import { WindowTickets } from './host/sqlApproval/windowTickets';
import { coreOnFirstUse } from './host/lazyServices';
import { ConnectionStatusBar } from './host/ui/statusBar';
import { hostSshOptions } from './host/connection/sshHostPrompts';
import { askPort } from './host/compose/askPort';
import { collabPort } from './host/compose/collabPort';
import {
  connectionCommandsPort,
  connectionStorePort,
  databaseSessionPort,
  sshHostPort,
} from './host/compose/connectionPorts';
import { adviseIndexesPort, healthViewPort } from './host/compose/dbaPorts';
import { languageModelToolsPort } from './host/compose/languageModelToolsPort';
import { jobsPort } from './host/compose/jobsPort';
import {
  approvalKeyPort,
  approvalsBadgePort,
  inlineApprovalPort,
  windowTicketsPort,
} from './host/compose/sqlApprovalPorts';
import { TunnelStatusBar } from './host/connection/tunnelStatusBar';
import { registerConnectionCommands } from './host/connection/connectionCommands';

export function activate(context: vscode.ExtensionContext): void {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Postgres Agent', { log: true });
  context.subscriptions.push(output);
  const logger = outputLogger(output);
  logPolicyWarningsTo(logger);

  // The one core loader of the window, passed to everything that needs the core: dist/services.js loads on its first call.
  const core = coreOnFirstUse();
  const workspaceDir = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const rootDir = workspaceDir ?? context.globalStorageUri.fsPath;
  const store = new ConnectionStore(connectionStorePort(core), context, workspaceDir);
  const ssh = sshHostPort(core, context.secrets);
  const sshFor = (profile: string) => hostSshOptions(ssh, profile);
  const session = new DatabaseSession(
    databaseSessionPort(core, sshFor),
    store,
    logger,
    context.globalStorageUri.fsPath,
  );
  const statusBar = new ConnectionStatusBar(session, store);
  const tunnelStatus = new TunnelStatusBar(session);
  const approvalKeys = new ApprovalKeyStore(approvalKeyPort(core), context.secrets, workspaceDir, logger);
  const tickets = new WindowTickets(windowTicketsPort(core), session, rootDir, logger, () => approvalKeys.current());
  // The settings in force, read once per action by whoever acts (host/settings/settings.ts).
  const settings = settingsPort(core);
  // The inline approval reveals the panel, which is created below (only called after activation).
  const approval = new InlineApproval({
    port: inlineApprovalPort(core),
    decisions: heldWriteDecisionsPort(core, settings, rootDir),
    session,
    tickets,
    workspaceDir,
    rootDir,
    logger,
    showPanel: () => panel.reveal(),
  });

  const changed = new vscode.EventEmitter<void>();
  const featureDeps: FeatureDeps = {
    workspaceState: context.workspaceState,
    session,
    tickets,
    approval,
    logger,
    rootDir,
    geminiKey: () => Promise.resolve(context.secrets.get(GEMINI_KEY_SECRET)),
    showPanel: () => panel.reveal(),
    onChange: () => changed.fire(),
  };
  const ask = new AskController(featureDeps, askPort(core, settings, rootDir, featureDeps));
  // Writes proposed by agents outside this window (pg-agent mcp, the language-model tools) come to the inline approval.
  const proposals = new OutsideProposals({ rootDir, tickets, approval, logger, showPanel: () => panel.reveal() });
  const jobs: JobController = new JobController({
    ...featureDeps,
    port: jobsPort(core, featureDeps),
    settings,
    showJobInStatusBar: (job) => statusBar.showJob(job),
    // The cockpits are created below (only called after activation).
    showJob: (jobId): Promise<void> => cockpits.open(jobId),
    isShown: (jobId) => cockpits.isShown(jobId),
  });
  let hasProfiles = false;
  let hasApiKey = false;
  /** Re-reads what the first-minute buttons depend on; failures only cost the buttons, so they are logged. */
  const refreshFlags = async () => {
    try {
      hasApiKey =
        (await context.secrets.get(GEMINI_KEY_SECRET)) !== undefined || Boolean(process.env.GEMINI_API_KEY?.trim());
      hasProfiles = (await store.profiles()).length > 0;
      changed.fire();
    } catch (error) {
      logger.warn('reading connection profiles failed', { error: String(error) });
    }
  };
  const schemaTree = new SchemaTreeView(schemaTreePort(core, session), session, logger);
  // Edit in the results grid: the edits become one write at the inline approval; the tab's read runs again after it.
  const gridEditing = new GridEditing(
    gridEditPort(core, session, approval, (sql): Promise<ResultsView> => results.read(sql)),
  );
  const results: ResultsPanel = new ResultsPanel(
    resultsPanelPort(core, settings, rootDir),
    context.extensionUri,
    session,
    workspaceDir,
    logger,
    gridEditing,
  );
  const diagram = new DiagramPanel(
    context.extensionUri,
    diagramPort(core, session, (schema, table) => schemaTree.revealTable(schema, table)),
    logger,
  );
  // .pgagent/approvals (SPEC §4), spelled out here so that activation does not load the core for it.
  const badge = new ApprovalsBadge(
    approvalsBadgePort(core),
    tickets,
    approval.onDidChange,
    join(rootDir, '.pgagent', 'approvals'),
    { webview: () => panel.webviewView, tree: schemaTree.treeView },
    logger,
  );
  const recentAsks = new RecentAsks(context.workspaceState);
  // Before the panel's own listener: the recent asks are current when it pushes.
  const askSeen = changed.event(() => recentAsks.observe(ask.view()));
  const panelHost: PanelHost = {
    state: () => {
      const shown = approval.view();
      const pendingHere = new Set(
        shown.approvals.filter((a) => a.status === 'pending' || a.status === 'stale').map((a) => a.ticketId),
      );
      return {
        connection: session.connection,
        schema: session.schema,
        results: rowsSummary(shown.results),
        // A job's write is decided in its cockpit: the navigator lists it under "Waiting for you".
        approvals: shown.approvals.filter((a) => jobs.jobOfTicket(a.ticketId) === undefined),
        answer: panelAnswer(ask.view()),
        hasProfiles,
        hasApiKey,
        ...jobs.state(),
        recentAsks: recentAsks.list(),
        waiting: waitingView(badge.waiting(), pendingHere, (ticketId) => jobs.jobOfTicket(ticketId)),
      };
    },
    onDidChange: changed.event,
    panelShown: () => {
      badge.refresh();
      void refreshFlags();
      // Jobs are read from their folders (no database needed to review a plan).
      void jobs.panelShown();
      session
        .ensureConnected()
        // Held ask runs and job writes come back once the database is open (not at activation: nothing heavy loads then).
        .then(() => Promise.all([ask.restoreHeld(), jobs.restoreHeld(), proposals.restoreAll()]))
        .catch((error: unknown) => showError(core, error, output));
    },
    runCommand: (command) => {
      void vscode.commands.executeCommand(COMMAND_IDS[command]);
    },
    decide: (ticketId, approve) => approval.decide(ticketId, approve),
    openUndo: (ticketId) => approval.openUndo(ticketId),
    openSql: (ticketId) => approval.openSql(ticketId),
    useSaferSql: (ticketId, rule) => approval.useSaferSql(ticketId, rule),
    // The navigator's job list opens the job's cockpit.
    job: (intent) => (intent.type === 'selectJob' ? jobs.open(intent.jobId) : jobs.handle(intent)),
    openAsk: async (threadId) => {
      await vscode.commands.executeCommand(OPEN_ASK_RESULT_COMMAND, threadId);
    },
  };
  const panel = new SidePanelProvider(context.extensionUri, panelHost, logger);
  const cockpits: CockpitPanels = new CockpitPanels(
    context.extensionUri,
    {
      state: (jobId): CockpitState => jobs.cockpitState(jobId),
      onDidChange: changed.event,
      // A cockpit restored after a reload may be the first view shown: it starts what the side panel starts.
      watch: (jobId) => {
        void jobs.watch(jobId);
        panelHost.panelShown();
      },
      unwatch: (jobId) => jobs.unwatch(jobId),
      focused: (jobId) => void jobs.select(jobId),
      title: (jobId) => jobs.list().find((j) => j.id === jobId)?.title,
      job: (intent) => jobs.handle(intent),
      decide: (ticketId, approve) => approval.decide(ticketId, approve),
      openSql: (ticketId) => approval.openSql(ticketId),
      openUndo: (ticketId) => approval.openUndo(ticketId),
      useSaferSql: (ticketId, rule) => approval.useSaferSql(ticketId, rule),
    },
    logger,
  );
  const collab = new CollabController(
    {
      ...featureDeps,
      extensionUri: context.extensionUri,
      openJob: (jobId) => jobs.open(jobId),
      jobRunners: jobs.runners,
    },
    collabPort(core, settings, rootDir, featureDeps),
  );
  const agentSurfaces = [
    ...registerMcpServerDefinition(context, store),
    ...registerGuardEndpoint(context, store, logger),
    ...registerLanguageModelTools(languageModelToolsPort(core, settings, { session, tickets, rootDir, logger })),
  ];
  logAgentSurfaces(logger);

  // The History view reads nothing until it is shown; Run Again goes through the inline approval.
  const history = new HistoryView(historyViewPort(core, session, rootDir, output));

  const disposables: vscode.Disposable[] = [
    store,
    session,
    statusBar,
    changed,
    session.onDidChange(() => changed.fire()),
    tickets,
    approval,
    approval.onDidChange(() => changed.fire()),
    askSeen,
    badge.onDidChange(() => changed.fire()),
    store.onDidChange(() => void refreshFlags()),
    panel,
    vscode.window.registerWebviewViewProvider(SIDE_PANEL_VIEW_ID, panel),
    schemaTree,
    badge,
    new QueryPlanView(queryPlanPort(core, settings, rootDir, output), session, logger),
    new HealthView(session, healthViewPort(core, output), logger),
    registerAdviseIndexes(session, adviseIndexesPort(core, output), logger),
    registerCompareSchemas(compareSchemasPort(session, store, core, logger, output)),
    history,
    registerQueryHistory(history),
    results,
    diagram,
    approval.onDidRead((read) => results.show(read, read.sql.replace(/\s+/g, ' ').trim().slice(0, 40))),
    ask.onDidShowRows(({ threadId, question, results: rows }) =>
      results.show(rows, question.slice(0, 40), askResultKey(threadId)),
    ),
    registerOpenAskResult({ results, recentAsks, shownThreadId: () => ask.view()?.threadId }),
    jobs,
    cockpits,
    proposals,
    ...agentSurfaces,
    ...registerCommands({
      context,
      store,
      session,
      approval,
      ask,
      logger,
      showError: (error) => showError(core, error, output),
      apiKeyChanged: () => void refreshFlags(),
    }),
    ...registerConnectionCommands(
      connectionCommandsPort(core, {
        store,
        logger,
        output,
        ssh: sshFor,
        connect: async (name) => {
          await store.setActive({ kind: 'profile', name });
          await session.connect({ kind: 'profile', name }).catch((error: unknown) => showError(core, error, output));
        },
      }),
    ),
    tunnelStatus,
    vscode.commands.registerCommand('postgresAgent.createApprovalKey', () => approvalKeys.create()),
    ...registerJobCommands(jobs, (ticketId, approve) => approval.decide(ticketId, approve)),
    collab,
    vscode.commands.registerCommand(COLLAB_COMMAND_ID, () => collab.command()),
  ];
  // Released in reverse order of creation: the panel before the session it shows, the session before the store.
  context.subscriptions.push({
    dispose: () => {
      for (const d of disposables.reverse()) d.dispose();
    },
  });
  logger.info('activated', {
    ms: Math.round((performance.now() - started) * 10) / 10,
    workspace: workspaceDir ?? 'none',
  });
}

/** What VS Code now offers agents from us: our language-model tools as its registry lists them (E2E reads this line). */
function logAgentSurfaces(logger: ReturnType<typeof outputLogger>): void {
  const tools =
    typeof vscode.lm?.tools === 'object'
      ? vscode.lm.tools.filter((t) => t.name.startsWith(LM_TOOL_PREFIX)).map((t) => t.name)
      : [];
  logger.info('agent tools registered', {
    languageModelTools: tools.join(','),
    mcpServerProvider: typeof vscode.lm?.registerMcpServerDefinitionProvider === 'function',
  });
}

export function deactivate(): void {
  // Everything is released through context.subscriptions, in reverse order of registration.
}
