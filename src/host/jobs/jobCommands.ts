/**
 * The jobs' palette commands (category "Postgres Agent"): each acts on the selected job (the cockpit in
 * front, else the last one opened) when it applies there, else asks which job; the cockpit's buttons send
 * the same intents.
 */
import * as vscode from 'vscode';
import { jobActions, mayAccept } from '../../shared/jobActions';
import type { JobActionName } from '../../shared/jobActions';
import { JOB_ID_PATTERN } from '../../shared/ids';
import { MAX_MESSAGE_CHARS } from '../../shared/limits';
import { SHOW_JOB_COCKPIT_COMMAND } from '../ui/statusBar';
import type { JobController } from './jobController';

export const JOB_COMMAND_IDS = {
  newJob: 'postgresAgent.newJob',
  openJob: 'postgresAgent.openJob',
  approvePlan: 'postgresAgent.approvePlan',
  requestChanges: 'postgresAgent.requestChanges',
  skipReview: 'postgresAgent.skipReview',
  pauseJob: 'postgresAgent.pauseJob',
  cancelJob: 'postgresAgent.cancelJob',
  continueJob: 'postgresAgent.continueJob',
  showJobCockpit: SHOW_JOB_COCKPIT_COMMAND,
  sendReviewChat: 'postgresAgent.sendReviewChat',
  applyPlanEdit: 'postgresAgent.applyPlanEdit',
  discardPlanEdit: 'postgresAgent.discardPlanEdit',
  approveJobWrite: 'postgresAgent.approveJobWrite',
  rejectJobWrite: 'postgresAgent.rejectJobWrite',
} as const;

const NONE_FOR: Record<JobActionName, string> = {
  approvePlan: 'No job is waiting for the review of its plan.',
  requestChanges: 'No job is waiting for the review of its plan.',
  skipReview: 'No job is waiting for the review of its plan.',
  continueJob: 'No job is paused or interrupted.',
  pauseJob: 'No job is planning or running.',
  cancelJob: 'No job can be cancelled (all are finished).',
};

function checkText(value: string): string | undefined {
  if (value.trim() === '') return 'Write something first.';
  if (value.length > MAX_MESSAGE_CHARS) return `At most ${MAX_MESSAGE_CHARS.toLocaleString('en-US')} characters.`;
  return undefined;
}

/**
 * `decide`: the one approval path of a held write (InlineApproval.decide), which the cockpit's Approve & run uses too.
 */
export function registerJobCommands(
  jobs: JobController,
  decide: (ticketId: string, approve: boolean) => Promise<void>,
): vscode.Disposable[] {
  /** The selected job when the action applies to it, else the person's pick among jobs that may accept it. */
  const target = async (action: JobActionName): Promise<string | undefined> => {
    await jobs.refresh();
    const selected = jobs.selected();
    if (selected && jobActions(selected).includes(action)) return selected.id;
    const candidates = jobs.list().filter((j) => mayAccept(j, action));
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage(NONE_FOR[action]);
      return undefined;
    }
    return pickJob(candidates, 'Which job?');
  };
  const pickJob = async (
    items: ReturnType<JobController['list']>,
    placeHolder: string,
  ): Promise<string | undefined> => {
    const picked = await vscode.window.showQuickPick(
      items.map((j) => ({
        label: j.title,
        description: `${j.state}${j.reviewCycles > 0 ? ` · ${j.reviewCycles} review cycle${j.reviewCycles === 1 ? '' : 's'}` : ''}`,
        detail: `${j.id} · updated ${new Date(j.updatedAt).toLocaleString()}`,
        id: j.id,
      })),
      { title: 'Postgres Agent: Jobs', placeHolder, matchOnDescription: true, matchOnDetail: true },
    );
    return picked?.id;
  };

  const commands: Record<string, (...args: unknown[]) => Promise<unknown>> = {
    [JOB_COMMAND_IDS.newJob]: async () => {
      const task = await vscode.window.showInputBox({
        title: 'Postgres Agent: New Job',
        prompt:
          'Describe the task in plain words. The agent explores the database and writes a plan; nothing runs until you approve it.',
        placeHolder: 'e.g. Archive orders older than two years into an archive table',
        ignoreFocusOut: true,
        validateInput: checkText,
      });
      if (task === undefined || task.trim() === '') return;
      await jobs.newJob(task.trim());
    },
    [JOB_COMMAND_IDS.openJob]: async () => {
      await jobs.refresh();
      const all = jobs.list();
      if (all.length === 0) {
        const choice = await vscode.window.showInformationMessage(
          'There are no jobs in this workspace yet.',
          'New Job…',
        );
        if (choice) await vscode.commands.executeCommand(JOB_COMMAND_IDS.newJob);
        return;
      }
      const id = await pickJob(all, 'Pick a job to open in its cockpit');
      if (id === undefined) return;
      await jobs.open(id);
    },
    // The status bar passes its job; from the palette or the keybinding: the selected job, else a pick.
    [JOB_COMMAND_IDS.showJobCockpit]: async (jobId?: unknown) => {
      const id = typeof jobId === 'string' && JOB_ID_PATTERN.test(jobId) ? jobId : jobs.selected()?.id;
      if (id === undefined) return vscode.commands.executeCommand(JOB_COMMAND_IDS.openJob);
      return jobs.open(id);
    },
    [JOB_COMMAND_IDS.sendReviewChat]: async () => {
      const job = jobs.selected();
      if (!job || job.busy !== null || job.chat.pending !== null) {
        void vscode.window.showInformationMessage(
          job ? 'The job is busy; ask the review chat once it is done.' : 'Open a job first (Open Job…).',
        );
        return;
      }
      const text = await vscode.window.showInputBox({
        title: `Postgres Agent: Review Chat — ${job.title}`,
        prompt: "Ask about the plan; the chat reads the job's files and history, and cannot run or approve anything.",
        ignoreFocusOut: true,
        validateInput: checkText,
      });
      if (text === undefined || text.trim() === '') return;
      await jobs.handle({ type: 'sendChat', jobId: job.id, text: text.trim(), debug: false });
    },
    ...Object.fromEntries(
      (
        [
          ['approveJobWrite', true],
          ['rejectJobWrite', false],
        ] as const
      ).map(([command, approve]) => [
        JOB_COMMAND_IDS[command],
        async () => {
          const approval = jobs.selected()?.approval;
          if (approval?.status !== 'pending') {
            void vscode.window.showInformationMessage('No write of the selected job is waiting for your approval.');
            return;
          }
          await decide(approval.ticketId, approve);
        },
      ]),
    ),
    ...Object.fromEntries(
      (['applyPlanEdit', 'discardPlanEdit'] as const).map((type) => [
        JOB_COMMAND_IDS[type],
        async () => {
          const job = jobs.selected();
          const edit = job?.chat.openPlanEdit;
          if (!job || !edit) {
            void vscode.window.showInformationMessage(
              'The review chat has proposed no edit of the plan that waits for a decision.',
            );
            return;
          }
          await jobs.handle({ type, jobId: job.id, editId: edit.id });
        },
      ]),
    ),
    [JOB_COMMAND_IDS.requestChanges]: async () => {
      const id = await target('requestChanges');
      if (id === undefined) return;
      const feedback = await vscode.window.showInputBox({
        title: 'Postgres Agent: Request Changes',
        prompt: 'What should change in the plan? The agent revises it and stops for your review again.',
        ignoreFocusOut: true,
        validateInput: checkText,
      });
      if (feedback === undefined || feedback.trim() === '') return;
      await jobs.requestChanges(id, feedback.trim());
    },
    // The actions that need nothing but the job: on the selected job when it applies, else a picked one.
    ...Object.fromEntries(
      (['approvePlan', 'skipReview', 'pauseJob', 'cancelJob', 'continueJob'] as const).map((action) => [
        JOB_COMMAND_IDS[action],
        async () => {
          const id = await target(action);
          if (id !== undefined) await jobs[action](id);
        },
      ]),
    ),
  };
  return Object.entries(commands).map(([id, handler]) => vscode.commands.registerCommand(id, handler));
}
