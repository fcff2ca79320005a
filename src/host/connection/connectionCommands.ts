/**
 * Edit Connection and Test Connection. Test runs the core's step-by-step check (tunnel, server, TLS,
 * login, a read) with a progress notification naming each step, logs every step to the output channel,
 * and ends with what passed and, for the step that failed, why and what to do.
 */
import * as vscode from 'vscode';
import type { ConnectionProfile } from '../../core/db/connectionTarget';
import type { StepResult } from '../../core/db/testConnection';
import type { Logger } from '../../core/platform/logger';
import type { CoreServices } from '../lazyServices';
import type { ConnectionStore } from './connectionStore';
import { promptForProfile } from './connectionForm';
import type { HostSsh } from './sshHostPrompts';

export const CONNECTION_COMMAND_IDS = {
  editConnection: 'postgresAgent.editConnection',
  testConnection: 'postgresAgent.testConnection',
} as const;

/** What Edit and Test Connection need (host/compose/connectionPorts.ts): the core's resolver and step-by-step test. */
export interface ConnectionCommandsPort extends Pick<CoreServices, 'resolveTarget' | 'testConnection'> {
  /** A test step's title (core/db/testConnection.ts STEP_TITLES). */
  stepTitle(step: StepResult['step']): string;
  store: ConnectionStore;
  logger: Logger;
  output: vscode.LogOutputChannel;
  ssh: (profile: string) => HostSsh;
  /** Opens a profile in this window (after it was edited). */
  connect(name: string): Promise<void>;
}

/** Saves what the form answered: the password to SecretStorage unless "keep". */
export async function saveAnswer(
  store: ConnectionStore,
  answer: NonNullable<Awaited<ReturnType<typeof promptForProfile>>>,
): Promise<void> {
  const password = answer.keepPassword ? await store.password(answer.profile.name) : answer.password;
  await store.saveProfile(answer.profile, password);
}

async function pickProfile(store: ConnectionStore, verb: string): Promise<ConnectionProfile | undefined> {
  const profiles = await store.profiles();
  if (profiles.length === 0) {
    void vscode.window.showInformationMessage(
      'Postgres Agent: no saved connection yet. Add one with "Postgres Agent: Add Connection…".',
    );
    return undefined;
  }
  const active = store.active();
  const sorted = [...profiles].sort(
    (a, b) =>
      Number(active.kind === 'profile' && b.name === active.name) -
      Number(active.kind === 'profile' && a.name === active.name),
  );
  const picked = await vscode.window.showQuickPick(
    sorted.map((p) => ({
      label: p.name,
      description: `${p.user}@${p.host}:${p.port ?? 5432}/${p.database}${p.ssh ? ` via ssh ${p.ssh.host}` : ''}`,
      profile: p,
    })),
    { title: `Postgres Agent: ${verb}` },
  );
  return picked?.profile;
}

export function registerConnectionCommands(port: ConnectionCommandsPort): vscode.Disposable[] {
  const { store, logger, output } = port;
  return [
    vscode.commands.registerCommand(CONNECTION_COMMAND_IDS.editConnection, async () => {
      const profile = await pickProfile(store, 'Edit Connection');
      if (!profile) return;
      const answer = await promptForProfile(profile);
      if (!answer) return;
      await saveAnswer(store, answer);
      logger.info('connection profile edited', { profile: profile.name });
      const active = store.active();
      if (active.kind === 'profile' && active.name === profile.name) await port.connect(profile.name);
    }),
    vscode.commands.registerCommand(CONNECTION_COMMAND_IDS.testConnection, async (name?: unknown) => {
      const profiles = await store.profiles();
      const profile =
        typeof name === 'string' ? profiles.find((p) => p.name === name) : await pickProfile(store, 'Test Connection');
      if (!profile) return;
      const password = await store.password(profile.name);
      const steps: StepResult[] = [];
      const ssh = port.ssh(profile.name);
      await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Postgres Agent: testing ${profile.name}`,
          cancellable: false,
        },
        async (progress) => {
          const target = port.resolveTarget({
            profile: profile.name,
            profiles,
            ...(password ? { profilePassword: password } : {}),
            env: {},
          });
          if (target.kind !== 'server') return;
          const result = await port.testConnection(
            target,
            { logger, ssh: ssh.options, connectTimeoutMs: 15_000, maxConnections: 1 },
            (step) => {
              steps.push(step);
              const line = `${step.ok ? '✓' : '✗'} ${port.stepTitle(step.step)}: ${step.ok ? step.detail : (step.error?.message ?? step.detail)}`;
              logger[step.ok ? 'info' : 'error'](`test connection ${profile.name}: ${line}`);
              progress.report({ message: line });
            },
          );
          if (result.some((s) => s.error?.code === 'SSH_AUTH_FAILED')) await ssh.forget();
        },
      );
      const failed = steps.find((s) => !s.ok);
      const summary = steps.map((s) => `${s.ok ? '✓' : '✗'} ${port.stepTitle(s.step)}`).join('  ');
      if (!failed) {
        void vscode.window.showInformationMessage(`Postgres Agent: ${profile.name} works. ${summary}`);
        return;
      }
      const edit = 'Edit Connection';
      const log = 'Show Log';
      const choice = await vscode.window.showErrorMessage(
        `Postgres Agent: ${profile.name} — ${port.stepTitle(failed.step)} failed: ${failed.error?.message ?? failed.detail}${failed.error?.advice ? ` ${failed.error.advice}` : ''} (${summary})`,
        edit,
        log,
      );
      if (choice === edit) await vscode.commands.executeCommand(CONNECTION_COMMAND_IDS.editConnection);
      if (choice === log) output.show(true);
    }),
  ];
}
