/**
 * Everything the panel and `pg-agent job show` display about one job, read from its folder: the plan
 * files, the todos, what changed in plan.md since the last review, tokens and cost so far.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Usage } from '../ask/state';
import { NO_USAGE, addUsage } from '../ask/state';
import { toAgentError } from '../platform/errors';
import { isAtomicWriteTemp } from '../fs/atomicWrite';
import type { Job } from './job';
import type { JobOutcome, JobStop } from './jobOutcome';
import type { JobStore } from './jobStore';
import type { Todo } from './todos';
import { parseTodos } from './todos';
import type { HistoryEntry } from './jobHistory';
import { HISTORY_DIR, diff, log } from './jobHistory';

export interface PlanChange {
  /** Review cycles compared (the plan shown at review `fromCycle` and at review `toCycle`). */
  fromCycle: number;
  toCycle: number;
  /** Unified diff of plan.md; '' when the plan did not change. */
  diff: string;
}

export interface JobDetail {
  job: Job;
  stop: JobStop;
  workspaceMd: string;
  planMd: string;
  /** The parsed todos, or the readable error when todos.yaml does not parse. */
  todos: { ok: true; items: Todo[] } | { ok: false; error: string };
  /** plan.md between the last two reviews; null before the second review. */
  planChange: PlanChange | null;
  /** Every model call of the job so far (phases and review chat), from audit.jsonl. */
  usage: Usage;
  /** Files of the job folder, relative, sorted (the history folder left out). */
  files: string[];
  /** The job's own git history, newest first. */
  history: HistoryEntry[];
}

export async function readJobDetail(store: JobStore, outcome: JobOutcome): Promise<JobDetail> {
  const id = outcome.job.id;
  const dir = store.jobDir(id);
  const [workspaceMd, planMd, todosText, history, files, usage] = await Promise.all([
    store.readFile(id, 'workspace.md').catch(() => ''),
    store.readFile(id, 'plan.md').catch(() => ''),
    store.readFile(id, 'todos.yaml').catch(() => '[]\n'),
    log(dir).catch(() => [] as HistoryEntry[]),
    listFiles(dir),
    usageOf(dir),
  ]);
  let todos: JobDetail['todos'];
  try {
    todos = { ok: true, items: parseTodos(todosText) };
  } catch (error) {
    todos = { ok: false, error: toAgentError(error).message };
  }
  return {
    job: outcome.job,
    stop: outcome.stop,
    workspaceMd,
    planMd,
    todos,
    planChange: await planChange(dir, history),
    usage,
    files,
    history,
  };
}

const REVIEW_COMMIT = /^Review cycle (\d+): plan ready for review/;

/** plan.md between the plans of the last two reviews (commits "Review cycle N: plan ready for review"). */
export async function planChange(dir: string, history: readonly HistoryEntry[]): Promise<PlanChange | null> {
  const reviews = history.filter((entry) => REVIEW_COMMIT.test(entry.message));
  const [newer, older] = reviews;
  if (!newer || !older) return null;
  const cycle = (entry: HistoryEntry) => Number(REVIEW_COMMIT.exec(entry.message)?.[1] ?? 0);
  return {
    fromCycle: cycle(older),
    toCycle: cycle(newer),
    diff: await diff(dir, older.oid, newer.oid, 'plan.md').catch(() => ''),
  };
}

/** Tokens and cost of every model call recorded in audit.jsonl (phases and review chat). */
export async function usageOf(dir: string): Promise<Usage> {
  const text = await readFile(join(dir, 'audit.jsonl'), 'utf8').catch(() => '');
  let usage = NO_USAGE;
  for (const line of text.split('\n')) {
    if (!line.includes('"model_call"')) continue;
    try {
      const record = JSON.parse(line) as {
        type?: string;
        inputTokens?: number;
        outputTokens?: number;
        costUsd?: number | null;
      };
      if (record.type !== 'model_call') continue;
      usage = addUsage(usage, {
        calls: 1,
        inputTokens: record.inputTokens ?? 0,
        outputTokens: record.outputTokens ?? 0,
        costUsd: record.costUsd ?? null,
      });
    } catch {
      // a torn last line (a write in progress) is not a model call yet
    }
  }
  return usage;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .filter(
      (path) => path !== HISTORY_DIR && !path.startsWith(`${HISTORY_DIR}/`) && !path.split('/').some(isAtomicWriteTemp),
    )
    .sort();
}
