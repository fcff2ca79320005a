// Plan tickets in a real VS Code (code-server + Chromium), against the scripted Gemini server: the plan
// review's Approve (in the job's cockpit) decides the job's plan ticket (bound to the hash of the plan shown), and a plan approved
// from a terminal (`pg-agent approvals approve`, as a teammate would over a shared store) moves the window's
// waiting job on by itself; with an approval key made in VS Code (SecretStorage, passphrase-protected), the panel's
// Approve asks its passphrase and is a signed decision that the CLI verifies against .pgagent/config.json. Screenshots: test-artifacts/e2e/planTicket/.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { call, strategic, tactical } from '../support/jobScript';
import type { RecordedRequest, Rule } from '../support/scriptedModelServer';
import { workbenchSuite } from './harness/suite';
import { teammateCli } from './harness/teammate';
import { cockpit, newJob, waitForCockpitStop } from './harness/cockpit';
import { answerPasswordBox, pickCommand, screenshot, seenNotifications } from './harness/workbench';

const SUITE = 'planTicket';
const SAMPLE_DB_TIMEOUT_MS = 150_000;
const STEP_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 30_000;
const REVIEWER_PASSPHRASE = 'reviewer passphrase';

const TASK_1 = 'Count the products of each category';
const TASK_2 = 'Count the customers of each country';
const TASK_3 = 'Count the orders of each status';
const plan = (what: string) => `# Plan\n\n1. ${what}\n`;

const suite = workbenchSuite(SUITE, { withModel: true });

const of = (title: string, phase: (req: RecordedRequest) => boolean) => (req: RecordedRequest) =>
  phase(req) && req.text.includes(`Job: ${title} (`);

/** One strategic turn (plan + todo, then plan_ready) and one tactical turn that completes the job. */
function script(title: string, what: string): Rule[] {
  return [
    {
      match: of(title, strategic),
      reply: {
        functionCalls: [
          call('write_plan', { content: plan(what) }),
          call('write_todos', { todos: [{ id: 't1', title: what }] }),
        ],
      },
    },
    { match: of(title, strategic), reply: { functionCall: call('plan_ready', { summary: what }) } },
    { match: of(title, tactical), reply: { functionCall: call('job_complete', { summary: `${what}: done.` }) } },
  ];
}

/** Waits until the job's cockpit shows it stopped at `stop`. */
function waitForStop(p: Page, title: string, stop: string, timeout = STEP_TIMEOUT_MS): Promise<unknown> {
  return waitForCockpitStop(p, title, stop, timeout);
}

/** `pg-agent` in a terminal of this workspace, as another person. */
function pgAgent(args: string[], user: string) {
  return teammateCli(user, suite.workspace(), [...args, '--workspace', suite.workspace()]);
}

interface PlanTicket {
  id: string;
  kind: string;
  status: string;
  sqlHash: string;
  plan?: { jobId: string };
  decisions: { by: string; approve: boolean }[];
}

async function planTickets(): Promise<PlanTicket[]> {
  const listed = await pgAgent(['approvals', 'list', '--all', '--json'], 'observer');
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as PlanTicket[]).filter((t) => t.kind === 'plan');
}

describe('Plan tickets in VS Code', () => {
  it(
    'Approve in the panel decides the plan ticket; a terminal approval moves the waiting job on',
    { timeout: 600_000 },
    async () => {
      const p = suite.page();
      suite
        .model()
        .script([
          ...script(TASK_1, 'Count products per category'),
          ...script(TASK_2, 'Count customers per country'),
          ...script(TASK_3, 'Count orders per status'),
        ]);

      // 1. The review waits on a plan ticket, listed with the others in a terminal.
      await newJob(p, TASK_1, { afterDatabaseOpen: false });
      await waitForStop(p, TASK_1, 'review', SAMPLE_DB_TIMEOUT_MS);
      const [pending] = await planTickets();
      expect(pending).toMatchObject({ kind: 'plan', status: 'PENDING_APPROVAL' });
      await screenshot(p, 'plan-review-with-ticket', SUITE);

      // 2. Approve plan in the panel: the plan ticket is decided (and used) by this window's person.
      await (await cockpit(p, TASK_1)).locator('[data-testid="approve-plan-button"]').click();
      await waitForStop(p, TASK_1, 'completed');
      const [decided] = (await planTickets()).filter((t) => t.id === pending?.id);
      expect(decided).toMatchObject({ status: 'EXECUTED', decisions: [{ approve: true }] });
      await screenshot(p, 'approved-in-panel-completed', SUITE);

      // 3. A second job waits for review; a teammate approves its plan ticket from a terminal.
      await newJob(p, TASK_2, { afterDatabaseOpen: false });
      await waitForStop(p, TASK_2, 'review');
      const second = (await planTickets()).find((t) => t.status === 'PENDING_APPROVAL');
      if (!second) throw new Error('the second job has no pending plan ticket');
      await screenshot(p, 'second-plan-waiting', SUITE);
      const stale = await pgAgent(['approvals', 'approve', second.id, '--hash', '0'.repeat(64)], 'teammate');
      expect(stale.code, 'a decision on another version of the plan is refused').toBe(4);
      expect(stale.stderr).toContain('another version of the plan');
      const approved = await pgAgent(
        ['approvals', 'approve', second.id, '--hash', second.sqlHash, '--comment', 'looks right'],
        'teammate',
      );
      expect(approved.code, approved.stderr).toBe(0);

      // 4. Nobody clicks anything in the window: the job moves on and completes.
      await waitForStop(p, TASK_2, 'completed');
      const [done] = (await planTickets()).filter((t) => t.id === second.id);
      expect(done).toMatchObject({ status: 'EXECUTED', decisions: [{ by: 'teammate', approve: true }] });
      await screenshot(p, 'teammate-approval-moved-job-on', SUITE);

      // 5. An approval key in VS Code's secret storage (encrypted with a passphrase): it enrols nobody, so the team
      // lists its public key; the panel's Approve then asks the passphrase and is a signed decision that verifies.
      const widget = p.locator('.quick-input-widget');
      await pickCommand(p, 'Postgres Agent: Create Approval Key…');
      await widget
        .locator('.quick-input-message', { hasText: 'Your name as an approver' })
        .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await p.keyboard.type('window-reviewer');
      await p.keyboard.press('Enter');
      await answerPasswordBox(p, 'A passphrase for this key', REVIEWER_PASSPHRASE);
      await answerPasswordBox(p, 'The same passphrase again', REVIEWER_PASSPHRASE);
      let enroll = '';
      await expect
        .poll(
          async () =>
            (enroll =
              (await seenNotifications(p))
                .map((n) => n.text)
                .find((t) => t.includes('pg-agent policy enroll window-reviewer')) ?? ''),
          { timeout: UI_TIMEOUT_MS },
        )
        .not.toBe('');
      const publicKey = /--key ([A-Za-z0-9_-]{43})/.exec(enroll)?.[1] ?? '';
      const configFile = join(suite.workspace(), '.pgagent', 'config.json');
      const config = JSON.parse(await readFile(configFile, 'utf8').catch(() => '{}')) as Record<string, unknown>;
      await writeFile(
        configFile,
        JSON.stringify({
          ...config,
          approval: { approvers: [{ name: 'window-reviewer', publicKey, roles: ['dba'] }] },
        }),
      );
      await newJob(p, TASK_3, { afterDatabaseOpen: false });
      await waitForStop(p, TASK_3, 'review');
      const third = (await planTickets()).find((t) => t.status === 'PENDING_APPROVAL');
      if (!third) throw new Error('the third job has no pending plan ticket');
      await (await cockpit(p, TASK_3)).locator('[data-testid="approve-plan-button"]').click();
      await answerPasswordBox(p, 'Passphrase of your approval key', REVIEWER_PASSPHRASE);
      await waitForStop(p, TASK_3, 'completed');
      const shown = await pgAgent(['approvals', 'show', third.id, '--json'], 'observer');
      expect(JSON.parse(shown.stdout)).toMatchObject({
        kind: 'plan',
        status: 'EXECUTED',
        decisions: [{ by: 'window-reviewer', approve: true, signed: true }],
      });
      await screenshot(p, 'signed-approval-in-panel', SUITE);
    },
  );
});
