/** Edits of plan.md proposed by the review chat: kept in chat.jsonl until the person applies or discards them. */
import { createHash, randomBytes } from 'node:crypto';
import { AgentError } from '../platform/errors';
import { commitAll, initHistory } from '../jobs/jobHistory';
import type { JobStore } from '../jobs/jobStore';
import { unifiedDiff } from '../jobs/lineDiff';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';
import type { PlanEditRecord, PlanEditStatus } from './chatLog';
import { appendChatRecord, readChatRecords } from './chatLog';
import { PLAN_EDIT_ID_PATTERN } from '../../shared/ids';

const MAX_PLAN_CHARS = 200_000;

export interface ProposedPlanEdit {
  id: string;
  summary: string;
  diff: string;
}

export function planHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Stores a full new plan.md as a proposal with its diff against the current plan.md. A proposal left open
 * from before is marked discarded (superseded), so the person has one edit to decide on.
 */
export async function proposePlanEdit(
  store: JobStore,
  jobId: string,
  input: { newPlan: string; summary: string },
  options: { now?: () => Date; logger?: Logger } = {},
): Promise<ProposedPlanEdit> {
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? silentLogger;
  const summary = input.summary.trim().replace(/\s+/g, ' ');
  if (summary === '') throw new AgentError('BAD_INPUT', 'A plan edit needs a one-line summary.');
  const newPlan = `${input.newPlan.trimEnd()}\n`;
  if (newPlan.trim() === '')
    throw new AgentError('BAD_INPUT', 'The proposed plan.md is empty.', 'Send the whole new plan.md.');
  if (newPlan.length > MAX_PLAN_CHARS)
    throw new AgentError('BAD_INPUT', `The proposed plan.md is longer than ${MAX_PLAN_CHARS} characters.`);
  const current = await store.readFile(jobId, 'plan.md');
  const diff = unifiedDiff(current, newPlan, { from: 'a/plan.md', to: 'b/plan.md' });
  if (diff === '')
    throw new AgentError(
      'BAD_INPUT',
      'The proposed plan.md is the same as the current one.',
      'Change the plan text, or do not propose an edit.',
    );

  const id = `edit_${randomBytes(6).toString('hex')}`;
  for (const open of await openEdits(store, jobId, logger)) {
    await appendChatRecord(store, jobId, {
      type: 'plan_edit_status',
      at: now().toISOString(),
      id: open,
      status: 'discarded',
      by: `superseded by ${id}`,
    });
  }
  await appendChatRecord(store, jobId, {
    type: 'plan_edit',
    at: now().toISOString(),
    id,
    summary,
    diff,
    basePlanHash: planHash(current),
    newPlan,
  });
  logger.info('plan edit proposed', { jobId, edit: id });
  return { id, summary, diff };
}

/** Writes the proposed plan.md (if plan.md did not change since the proposal) and commits it in the job history. */
export async function applyPlanEdit(store: JobStore, jobId: string, editId: string, by: string): Promise<void> {
  const edit = await openEdit(store, jobId, editId);
  const current = await store.readFile(jobId, 'plan.md');
  if (planHash(current) !== edit.record.basePlanHash) {
    throw new AgentError(
      'BAD_INPUT',
      `plan.md changed since plan edit ${editId} was proposed, so applying it would overwrite those changes.`,
      'Discard this edit and ask the review chat to propose it again on the current plan.',
    );
  }
  const who = actorName(by);
  await store.writeFile(jobId, 'plan.md', edit.record.newPlan);
  const dir = store.jobDir(jobId);
  await initHistory(dir);
  const commit = await commitAll(dir, `Plan edited in review: ${edit.record.summary} (applied by ${who})`);
  await appendChatRecord(store, jobId, {
    type: 'plan_edit_status',
    at: new Date().toISOString(),
    id: editId,
    status: 'applied',
    by: who,
    commit,
  });
}

export async function discardPlanEdit(store: JobStore, jobId: string, editId: string, by: string): Promise<void> {
  await openEdit(store, jobId, editId);
  await appendChatRecord(store, jobId, {
    type: 'plan_edit_status',
    at: new Date().toISOString(),
    id: editId,
    status: 'discarded',
    by: actorName(by),
  });
}

function actorName(by: string): string {
  return by.trim().replace(/\s+/g, ' ').slice(0, 200) || 'someone';
}

/** The statuses of every plan edit, latest first wins. */
function editStates(
  records: Awaited<ReturnType<typeof readChatRecords>>,
): Map<string, { record: PlanEditRecord; status: PlanEditStatus }> {
  const edits = new Map<string, { record: PlanEditRecord; status: PlanEditStatus }>();
  for (const record of records) {
    if (record.type === 'plan_edit') edits.set(record.id, { record, status: 'proposed' });
    else if (record.type === 'plan_edit_status') {
      const edit = edits.get(record.id);
      if (edit) edit.status = record.status;
    }
  }
  return edits;
}

async function openEdits(store: JobStore, jobId: string, logger: Logger): Promise<string[]> {
  const edits = editStates(await readChatRecords(store, jobId, logger));
  return [...edits.values()].filter((e) => e.status === 'proposed').map((e) => e.record.id);
}

async function openEdit(store: JobStore, jobId: string, editId: string): Promise<{ record: PlanEditRecord }> {
  if (!PLAN_EDIT_ID_PATTERN.test(editId)) {
    throw new AgentError(
      'BAD_INPUT',
      `"${editId.slice(0, 60)}" is not a plan edit id.`,
      'Plan edit ids look like edit_ followed by 12 hexadecimal digits.',
    );
  }
  const edit = editStates(await readChatRecords(store, jobId)).get(editId);
  if (!edit)
    throw new AgentError(
      'BAD_INPUT',
      `Job ${jobId} has no plan edit ${editId}.`,
      'Open the job again to see its current plan edits.',
    );
  if (edit.status !== 'proposed') {
    throw new AgentError(
      'BAD_INPUT',
      `Plan edit ${editId} was already ${edit.status}; it can no longer be applied or discarded.`,
      'Ask the review chat for a new proposal if the plan should still change.',
    );
  }
  return edit;
}
