/**
 * "Postgres Agent: Start Guarded Endpoint": runs `pg-agent guard` (a child process, guardLaunch.ts) in front
 * of the active server connection, with a guard user of its own, and copies that user's URL to the
 * clipboard: point psql, an ORM or an agent's shell at it, and its writes wait in "Waiting for you" like
 * any held write (same workspace, same ticket store). "Stop Guarded Endpoint" (or closing the window) ends it.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import * as vscode from 'vscode';
import type { Logger } from '../../core/platform/logger';
import type { ConnectionStore } from '../connection/connectionStore';
import { redisUrl } from '../settings/settings';
import { buildGuardLaunch, endpointUrl, listeningPort } from './guardLaunch';

export function registerGuardEndpoint(
  context: vscode.ExtensionContext,
  store: ConnectionStore,
  logger: Logger,
): vscode.Disposable[] {
  let running: { child: ChildProcess; url: string; connection: string } | undefined;
  const stop = () => {
    running?.child.kill('SIGINT');
    running = undefined;
  };

  const start = async () => {
    const choice = store.active();
    const profile = choice.kind === 'sample' ? undefined : (await store.profiles()).find((p) => p.name === choice.name);
    if (!profile) {
      return vscode.window.showWarningMessage(
        "The guarded endpoint stands in front of a PostgreSQL server: select a server connection first (the sample database is this window's own).",
      );
    }
    if (!vscode.workspace.isTrusted)
      return vscode.window.showWarningMessage(
        'Trust this workspace first: the guard keeps its tickets and users in its .pgagent/ folder.',
      );
    if (running?.connection === profile.name) {
      await vscode.env.clipboard.writeText(running.url);
      return vscode.window.showInformationMessage(
        `The guarded endpoint for ${profile.name} runs already; its URL is copied again.`,
      );
    }
    stop();
    const password = await store.password(profile.name);
    const launch = buildGuardLaunch({
      extensionPath: context.extensionPath,
      nodePath: process.execPath,
      electron: process.versions.electron !== undefined,
      workspaceDir: store.workspaceDir ?? context.globalStorageUri.fsPath,
      profile,
      ...(password ? { password } : {}),
      ...(redisUrl() ? { redisUrl: redisUrl() } : {}),
    });
    const env = { ...process.env, ...launch.env };
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Starting a guarded endpoint for ${profile.name}…` },
      async () => {
        const added = await new Promise<string>((resolve, reject) =>
          execFile(launch.command, launch.addUserArgs, { cwd: launch.cwd, env }, (error, stdout, stderr) =>
            error ? reject(new Error(stderr || error.message)) : resolve(stdout),
          ),
        );
        const { url: userUrl } = JSON.parse(added) as { url: string };
        const child = spawn(launch.command, launch.serveArgs, {
          cwd: launch.cwd,
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        const port = await new Promise<number>((resolve, reject) => {
          child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString('utf8');
            const found = listeningPort(stderr);
            if (found !== undefined) resolve(found);
          });
          child.once('exit', (code) => reject(new Error(`pg-agent guard stopped (${code}): ${stderr.trim()}`)));
        });
        child.stderr.on('data', (chunk: Buffer) => logger.info('guard', { output: chunk.toString('utf8').trim() }));
        child.once('exit', (code) => {
          logger.info('guarded endpoint stopped', { connection: profile.name, code });
          if (running?.child === child) running = undefined;
        });
        const url = endpointUrl(userUrl, port);
        running = { child, url, connection: profile.name };
        await vscode.env.clipboard.writeText(url);
        logger.info('guarded endpoint started', { connection: profile.name, port, user: launch.user });
      },
    );
    return vscode.window.showInformationMessage(
      `Guarded endpoint for ${profile.name} on 127.0.0.1:${running?.url ? new URL(running.url).port : '?'}: its URL (guard user ${launch.user}) is copied. Reads pass; writes wait in "Waiting for you".`,
    );
  };

  return [
    vscode.commands.registerCommand('postgresAgent.startGuardedEndpoint', () =>
      start().catch((error: unknown) =>
        vscode.window.showErrorMessage(
          `Could not start the guarded endpoint: ${error instanceof Error ? error.message : String(error)}`,
        ),
      ),
    ),
    vscode.commands.registerCommand('postgresAgent.stopGuardedEndpoint', () => {
      const had = running !== undefined;
      stop();
      return vscode.window.showInformationMessage(
        had ? 'Guarded endpoint stopped.' : 'No guarded endpoint runs in this window.',
      );
    }),
    { dispose: stop },
  ];
}
