/**
 * A collaborative planning session (seed 003, for a database): context → rounds until convergence, a
 * question for the person, or the round limit → the person's decision (choose an option, clarify, change
 * direction, more analysis) → IMPL_PLAN.md + plan.json. Every step reads and writes the session folder
 * only, so each can run in a new process; a failed step leaves the session where it was, error recorded.
 */
import type { SchemaSnapshot } from '../../shared/schema';
import type { Db } from '../db/db';
import { AgentError, toAgentError } from '../platform/errors';
import type { LlmProvider } from '../llm/provider';
import type { Logger } from '../platform/logger';
import { loadParser } from '../sql/parse';
import type { SafetySettings } from '../sql/safetySettings';
import { buildAnalysts, providerLabel } from './collabModels';
import { historyText, planMessages } from './collabPrompts';
import { callWithFallback } from './fallbackCall';
import type { GatheredContext } from './gatherContext';
import { gatherContext } from './gatherContext';
import { implPlanMarkdown } from './implPlanMarkdown';
import { planJsonSchema, planOutputSchema } from './planSchema';
import type { PlanJson } from './planSchema';
import { runRound } from './runRound';
import type { CollabStore } from './sessionStore';
import type { SessionDecisionRecord, SessionState, Synthesis } from './sessionTypes';
import { newSessionId } from './sessionTypes';
import { assertDecidable, taskOf } from './sessionDecision';
import type { SessionDecision } from './sessionDecision';
import { NO_USAGE, sessionRecorder } from './sessionRecorder';

export const DEFAULT_MAX_ROUNDS = 3;

export interface CollabDeps {
  store: CollabStore;
  db: Db;
  /** Password-free key of the database (the session is bound to it, like a job). */
  connectionKey: string;
  /** The configured models in fallback order (`--models`). */
  providers: readonly LlmProvider[];
  loadSnapshot: () => Promise<SchemaSnapshot>;
  settings: SafetySettings;
  logger: Logger;
  signal?: AbortSignal;
  modelTimeoutMs?: number;
  contextBudgetTokens?: number;
  now?: () => Date;
  progress?: (message: string) => void;
  /** After each save of session-state.json (a view can follow the session as it runs). */
  onSaved?: (state: SessionState) => void;
}

export class CollabSessionRunner {
  private readonly now: () => Date;

  constructor(private readonly deps: CollabDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Creates the session, gathers the context and runs rounds to the first decision point. */
  async start(request: { task: string; maxRounds?: number; by: string }): Promise<SessionState> {
    const task = request.task.trim();
    if (task === '')
      throw new AgentError(
        'BAD_INPUT',
        'The task is empty.',
        'Describe what should be planned, e.g. "archive orders older than two years".',
      );
    const maxRounds = request.maxRounds ?? DEFAULT_MAX_ROUNDS;
    if (!Number.isSafeInteger(maxRounds) || maxRounds < 1 || maxRounds > 10)
      throw new AgentError('BAD_INPUT', `--max-rounds must be 1 to 10, got ${maxRounds}.`);
    if (this.deps.providers.length === 0) throw noModels();
    await loadParser();
    const at = this.now().toISOString();
    const state: SessionState = {
      id: newSessionId(),
      task,
      direction: null,
      createdAt: at,
      updatedAt: at,
      connection: this.deps.connectionKey,
      maxRounds,
      models: this.deps.providers.map(providerLabel),
      phase: 'analysis',
      currentRound: 0,
      roundsThisLeg: 0,
      rounds: [],
      decisions: [],
      awaiting: null,
      selectedOption: null,
      jobId: null,
      lastError: null,
      usage: { total: NO_USAGE, byModel: [] },
    };
    await this.deps.store.create(state);
    this.deps.onSaved?.(state);
    this.deps.progress?.(`Session ${state.id} created in ${this.deps.store.sessionDir(state.id)}`);
    await this.deps.store.audit(state.id, {
      type: 'session',
      event: 'created',
      by: request.by,
      task,
      models: state.models,
      maxRounds,
    });
    return this.locked(state.id, 'the first round', () =>
      this.guard(state, async () => {
        await this.gather(state);
        await this.runLeg(state, null);
      }),
    );
  }

  /** A person's decision at a decision point; the analysis goes on, or the plan is written. */
  async decide(id: string, decision: SessionDecision, by: string): Promise<SessionState> {
    return this.locked(id, `the decision ${decision.kind}`, () => this.decideLocked(id, decision, by));
  }

  private async locked<T>(id: string, what: string, step: () => Promise<T>): Promise<T> {
    const release = await this.deps.store.lock(id, what);
    try {
      return await step();
    } finally {
      await release();
    }
  }

  private async decideLocked(id: string, decision: SessionDecision, by: string): Promise<SessionState> {
    const state = await this.deps.store.get(id);
    this.assertConnection(state);
    if (this.deps.providers.length === 0) throw noModels();
    await loadParser();
    assertDecidable(state, decision);
    const record: SessionDecisionRecord = {
      kind: decision.kind,
      by,
      at: this.now().toISOString(),
      round: state.currentRound,
      ...(decision.kind === 'option' ? { option: decision.option } : {}),
      ...(decision.kind === 'clarify' || decision.kind === 'redirect' ? { text: decision.text.trim() } : {}),
    };
    if (decision.kind === 'option') {
      const latest = await this.deps.store.readSynthesis(id, state.currentRound);
      const solution = latest.solutions[decision.option - 1];
      if (!solution)
        throw new AgentError(
          'BAD_INPUT',
          `Round ${state.currentRound} has ${latest.solutions.length} option(s); there is no option ${decision.option}.`,
          `Pick 1 to ${latest.solutions.length}.`,
        );
    }
    state.decisions.push(record);
    await this.deps.store.audit(id, { type: 'decision', ...record });
    return this.guard(state, async () => {
      switch (decision.kind) {
        case 'option':
          await this.writePlan(state, decision.option, by);
          return;
        case 'redirect':
          state.direction = decision.text.trim();
          state.rounds = state.rounds.map((r) => ({ ...r, superseded: true }));
          await this.gather(state);
          await this.runLeg(state, `New direction: ${decision.text.trim()}`);
          return;
        case 'clarify':
          await this.runLeg(state, this.clarifications(state).join('\n'));
          return;
        case 'more':
          await this.runLeg(state, this.clarifications(state).join('\n') || null);
          return;
        default: {
          const unexpected: never = decision;
          throw new AgentError('BAD_INPUT', `Unknown decision ${JSON.stringify(unexpected)}.`);
        }
      }
    });
  }

  /** Runs a step; on failure the session keeps its state and records the error (cancel included). */
  private async guard(state: SessionState, step: () => Promise<void>): Promise<SessionState> {
    try {
      await step();
      state.lastError = null;
      await this.save(state);
      return state;
    } catch (error) {
      const e = toAgentError(error);
      state.lastError = { code: e.code, message: e.message, at: this.now().toISOString() };
      if (state.phase === 'planning') state.phase = 'awaiting-decision';
      await this.save(state);
      await this.deps.store.audit(state.id, { type: 'error', code: e.code, message: e.message, phase: state.phase });
      this.deps.logger.warn('planning session step failed; the session keeps its state', {
        sessionId: state.id,
        code: e.code,
        error: e.message,
      });
      throw error;
    }
  }

  private async gather(state: SessionState): Promise<void> {
    this.deps.progress?.('Gathering the database context…');
    const snapshot = await this.deps.loadSnapshot();
    const context = await gatherContext(this.deps.db, snapshot, taskOf(state), {
      statementTimeoutMs: this.deps.settings.statementTimeoutMs,
      lockTimeoutMs: this.deps.settings.lockTimeoutMs,
      ...(this.deps.contextBudgetTokens ? { budgetTokens: this.deps.contextBudgetTokens } : {}),
    });
    await this.deps.store.writeText(state.id, 'context.json', `${JSON.stringify(context, null, 2)}\n`);
  }

  /** Automatic rounds until a decision point: converged, a question for the person, or maxRounds in this leg. */
  private async runLeg(state: SessionState, userInput: string | null): Promise<void> {
    const context = JSON.parse(await this.deps.store.readText(state.id, 'context.json')) as GatheredContext;
    state.roundsThisLeg = 0;
    state.awaiting = null;
    const analysts = buildAnalysts(this.deps.providers);
    for (;;) {
      state.phase = 'analysis';
      await this.save(state);
      const previous = await this.currentDirectionRounds(state);
      const round = state.currentRound + 1;
      const synthesis = await runRound(
        {
          db: this.deps.db,
          analysts,
          settings: this.deps.settings,
          recorder: sessionRecorder(state, this.deps.store, this.deps.progress),
          now: this.now,
          ...(this.deps.signal ? { signal: this.deps.signal } : {}),
          ...(this.deps.modelTimeoutMs ? { modelTimeoutMs: this.deps.modelTimeoutMs } : {}),
          ...(this.deps.progress ? { progress: this.deps.progress } : {}),
        },
        {
          sessionId: state.id,
          round,
          task: taskOf(state),
          context,
          history: historyText(
            previous.map((s) => ({
              round: s.round,
              solutions: s.solutions,
              agreements: s.cross_verification.agreements.map((p) => p.point),
              disagreements: s.cross_verification.disagreements.map((p) => p.point),
            })),
          ),
          userInput,
          knownInsights: previous.flatMap((s) => s.convergence.newInsights),
          roundsLeft: state.maxRounds - (state.roundsThisLeg + 1),
        },
      );
      await this.deps.store.writeSynthesis(synthesis);
      state.currentRound = round;
      state.roundsThisLeg += 1;
      state.rounds.push({
        number: round,
        models: [...new Set(synthesis.analyses.map((a) => a.model))],
        solutions: synthesis.solutions.length,
        score: synthesis.convergence.score,
        recommendation: synthesis.convergence.recommendation,
        openDisagreements: synthesis.convergence.openDisagreements,
        degraded: synthesis.degraded !== null,
        superseded: false,
      });
      await this.deps.store.audit(state.id, {
        type: 'round',
        round,
        score: synthesis.convergence.score,
        components: synthesis.convergence.components,
        recommendation: synthesis.convergence.recommendation,
        degraded: synthesis.degraded !== null,
      });
      this.deps.progress?.(
        `Round ${round}: convergence ${synthesis.convergence.score.toFixed(2)} → ${synthesis.convergence.recommendation}`,
      );
      if (synthesis.convergence.recommendation === 'continue') continue;
      state.phase = 'awaiting-decision';
      state.awaiting = {
        kind: synthesis.convergence.recommendation === 'user_input_needed' ? 'clarification' : 'choice',
        round,
        questions: synthesis.clarification_questions,
        options: synthesis.solutions.length,
      };
      return;
    }
  }

  private async writePlan(state: SessionState, option: number, by: string): Promise<void> {
    state.phase = 'planning';
    await this.save(state);
    this.deps.progress?.(`Writing the plan of option ${option}…`);
    const latest = await this.deps.store.readSynthesis(state.id, state.currentRound);
    const solution = latest.solutions[option - 1];
    if (!solution) throw new AgentError('BAD_INPUT', `There is no option ${option}.`);
    const context = JSON.parse(await this.deps.store.readText(state.id, 'context.json')) as GatheredContext;
    const result = await callWithFallback(
      this.deps.providers,
      planMessages(
        taskOf(state),
        solution,
        latest.cross_verification.agreements.map((a) => a.point),
        this.clarifications(state),
        context,
      ),
      planOutputSchema,
      {
        node: 'plan',
        recorder: sessionRecorder(state, this.deps.store, this.deps.progress),
        ...(this.deps.signal ? { signal: this.deps.signal } : {}),
        ...(this.deps.modelTimeoutMs ? { timeoutMs: this.deps.modelTimeoutMs } : {}),
      },
    );
    const chosen = [...state.decisions].reverse().find((d) => d.kind === 'option');
    const plan: PlanJson = planJsonSchema.parse({
      ...result.value,
      _metadata: {
        source: 'collaborative-discussion',
        session_id: state.id,
        option,
        option_name: solution.name,
        chosen_by: by,
        chosen_at: chosen?.at ?? this.now().toISOString(),
        generated_at: this.now().toISOString(),
        models: [result.model],
      },
    });
    await this.deps.store.writeText(state.id, 'plan.json', `${JSON.stringify(plan, null, 2)}\n`);
    await this.deps.store.writeText(state.id, 'IMPL_PLAN.md', implPlanMarkdown(plan, taskOf(state), solution));
    state.selectedOption = option;
    state.awaiting = null;
    state.phase = 'planned';
    await this.deps.store.audit(state.id, { type: 'plan', option, tasks: plan.tasks.length, model: result.model });
  }

  /** The rounds since the last change of direction, oldest first. */
  private async currentDirectionRounds(state: SessionState): Promise<Synthesis[]> {
    const numbers = state.rounds.filter((r) => !r.superseded).map((r) => r.number);
    return Promise.all(numbers.map((n) => this.deps.store.readSynthesis(state.id, n)));
  }

  /** The person's clarifications since the last change of direction, oldest first. */
  private clarifications(state: SessionState): string[] {
    const lastRedirect = state.decisions.map((d) => d.kind).lastIndexOf('redirect');
    return state.decisions
      .slice(lastRedirect + 1)
      .filter((d) => d.kind === 'clarify' && d.text)
      .map((d) => d.text ?? '');
  }

  private assertConnection(state: SessionState): void {
    if (state.connection !== this.deps.connectionKey) {
      throw new AgentError(
        'BAD_INPUT',
        `Session ${state.id} works on ${state.connection}, not on ${this.deps.connectionKey}.`,
        "Pass the session's database with --db URL (or --connection NAME), as when it was created.",
      );
    }
  }

  private async save(state: SessionState): Promise<void> {
    state.updatedAt = this.now().toISOString();
    await this.deps.store.saveState(state);
    this.deps.onSaved?.(state);
  }
}

function noModels(): AgentError {
  return new AgentError(
    'CONFIG_INVALID',
    'Collaborative planning needs at least one language model, and none is configured.',
    'Pass --models gemini:NAME,openai:NAME with GEMINI_API_KEY and OPENAI_BASE_URL set, or set one of them.',
  );
}
