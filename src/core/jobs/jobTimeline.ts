/**
 * A job's activity as the cockpit draws it: audit.jsonl folded into steps (each phase iteration, each run
 * of review-chat turns) with their model calls, tokens, cost and model time, and the moments between them
 * (review decisions, status changes, write decisions, errors). Pure over the file's text.
 */
import { join } from 'node:path';
import type { TimelineMarkView, TimelineStepView, TimelineView } from '../../shared/cockpitProtocol';
import { settled } from '../fs/atomicWrite';
import { ReadByIdentity } from './jobStore';

/** The steps kept (the newest): a long job's chart stays readable and its snapshot small. */
export const TIMELINE_STEPS_KEPT = 60;

interface AuditLine {
  at?: unknown;
  type?: unknown;
  phase?: unknown;
  node?: unknown;
  event?: unknown;
  iteration?: unknown;
  summary?: unknown;
  inputTokens?: unknown;
  outputTokens?: unknown;
  latencyMs?: unknown;
  costUsd?: unknown;
  action?: unknown;
  by?: unknown;
  cycle?: unknown;
  to?: unknown;
  approve?: unknown;
  code?: unknown;
  comment?: unknown;
}

const PLAN_TICKET_CREATED = /^plan ticket for review cycle \d+/;

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const REVIEW_ACTION: Record<string, string> = {
  approve: 'plan approved',
  revise: 'changes requested',
  skip: 'run as is',
};
const STATUS_MARK: Record<string, string> = {
  pending_review: 'plan ready for review',
  frozen: 'paused',
  cancelled: 'cancelled',
  failed: 'failed',
  completed: 'completed',
};

export function timelineFromAudit(auditText: string): TimelineView {
  const steps: TimelineStepView[] = [];
  const marks: TimelineMarkView[] = [];
  /** The phase step still open (started, not ended), and the chat step calls are added to. */
  let open: TimelineStepView | undefined;
  let chat: TimelineStepView | undefined;
  let reviewCycle = 0;
  const mark = (at: string, words: string) => marks.push({ at, text: words, after: steps.length - 1 });
  const newStep = (
    kind: TimelineStepView['kind'],
    phase: TimelineStepView['phase'],
    iteration: number,
    at: string,
  ): TimelineStepView => {
    const step: TimelineStepView = {
      kind,
      phase,
      iteration,
      startedAt: at,
      endedAt: null,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      modelMs: 0,
      summary: null,
    };
    steps.push(step);
    return step;
  };
  for (const line of auditText.split('\n')) {
    if (line.trim() === '') continue;
    let record: AuditLine;
    try {
      record = JSON.parse(line) as AuditLine;
    } catch {
      continue; // a torn last line: a write in progress
    }
    if (typeof record !== 'object' || record === null) continue;
    const at = text(record.at);
    switch (record.type) {
      case 'phase': {
        const phase = record.phase === 'tactical' ? 'tactical' : 'strategic';
        if (record.event === 'start') {
          chat = undefined;
          open = newStep('phase', phase, num(record.iteration), at);
        } else if (record.event === 'end') {
          const step =
            open?.phase === phase
              ? open
              : [...steps].reverse().find((s) => s.kind === 'phase' && s.phase === phase && s.endedAt === null);
          if (step) {
            step.endedAt = at;
            step.summary = text(record.summary) || null;
          }
          if (open === step) open = undefined;
        }
        break;
      }
      case 'model_call': {
        const phase =
          record.phase === 'review' || record.node === 'review_chat'
            ? 'review'
            : record.phase === 'tactical'
              ? 'tactical'
              : 'strategic';
        let step: TimelineStepView;
        if (phase === 'review') {
          chat ??= newStep('chat', 'review', reviewCycle, at);
          step = chat;
          step.endedAt = at;
        } else {
          chat = undefined;
          if (open?.phase !== phase)
            open = newStep('phase', phase, steps.filter((s) => s.phase === phase).length + 1, at);
          step = open;
        }
        step.calls += 1;
        step.inputTokens += num(record.inputTokens);
        step.outputTokens += num(record.outputTokens);
        step.modelMs += num(record.latencyMs);
        step.costUsd =
          step.costUsd === null || typeof record.costUsd !== 'number' ? null : step.costUsd + record.costUsd;
        break;
      }
      case 'review': {
        chat = undefined;
        const by = text(record.by);
        mark(
          at,
          `Review ${num(record.cycle)}: ${REVIEW_ACTION[text(record.action)] ?? text(record.action)}${by ? ` by ${by}` : ''}`,
        );
        break;
      }
      case 'status': {
        const words = STATUS_MARK[text(record.to)];
        if (record.to === 'pending_review') reviewCycle += 1;
        if (words) {
          chat = undefined;
          mark(at, record.to === 'pending_review' ? `${words} (cycle ${reviewCycle})` : words);
        }
        break;
      }
      case 'approval':
        // endStrategic records the plan ticket it creates this way; the review's decision has its own record.
        if (PLAN_TICKET_CREATED.test(text(record.comment))) break;
        mark(
          at,
          `write ${record.approve === true ? 'approved' : 'rejected'}${text(record.by) ? ` by ${text(record.by)}` : ''}`,
        );
        break;
      case 'error':
        mark(at, `error ${text(record.code)}`);
        break;
      default:
        break;
    }
  }
  const dropped = Math.max(0, steps.length - TIMELINE_STEPS_KEPT);
  return {
    steps: steps.slice(dropped),
    marks: marks.filter((m) => m.after >= dropped - 1).map((m) => ({ ...m, after: m.after - dropped })),
  };
}

/**
 * Each job's audit.jsonl, read and folded again only when the file changed: an open cockpit refreshes on
 * every change of the job's files, and the audit log (every prompt and reply) is its largest.
 */
const audits = new ReadByIdentity<TimelineView>();

export function readJobTimeline(jobDir: string): Promise<TimelineView> {
  return settled(() => audits.read(join(jobDir, 'audit.jsonl'), timelineFromAudit) ?? timelineFromAudit('')).catch(() =>
    timelineFromAudit(''),
  );
}
