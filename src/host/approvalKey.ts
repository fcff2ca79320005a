/**
 * This window's approval key (SPEC §5.3): an Ed25519 private key kept in VS Code's SecretStorage (never in
 * a file), whose public key, name and roles go into .pgagent/config.json approval.approvers. When it exists,
 * decisions made here (CodeLens, panel, plan review) are signed with it and recorded under its name.
 */
import * as vscode from 'vscode';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import type { SigningKey } from '../core/approvals/approvalPath';
import type { Logger } from '../core/logger';
import { coreServices } from './lazyServices';

export const APPROVAL_KEY_SECRET = 'postgresAgent.approvalKey';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class ApprovalKeyStore {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly workspaceDir: string | undefined,
    private readonly logger: Logger,
  ) {}

  /** The key decisions are signed with, or undefined when none was made (decisions are then unsigned). */
  async current(): Promise<SigningKey | undefined> {
    const text = await this.secrets.get(APPROVAL_KEY_SECRET);
    if (text === undefined) return undefined;
    try {
      const stored = JSON.parse(text) as { name?: unknown; pem?: unknown };
      if (typeof stored.name !== 'string' || typeof stored.pem !== 'string') throw new Error('not a stored key');
      return { name: stored.name, privateKey: createPrivateKey(stored.pem) };
    } catch (error) {
      // A damaged secret must not sign anything, nor silently drop to unsigned: the decision is refused.
      throw new (coreServices().AgentError)('CONFIG_INVALID', 'The approval key in VS Code\'s secret storage cannot be read.', 'Run "Postgres Agent: Create Approval Key…" to make a new one.', { cause: error });
    }
  }

  /** Asks for a name and roles, makes the key pair, and adds the approver to .pgagent/config.json. */
  async create(): Promise<void> {
    if (this.workspaceDir === undefined) {
      void vscode.window.showWarningMessage('Open a workspace folder first: approvers are listed in its .pgagent/config.json.');
      return;
    }
    const existing = await this.current().catch(() => undefined);
    if (existing) {
      const replace = await vscode.window.showWarningMessage(`This VS Code already signs as "${existing.name}". Make a new key?`, { modal: true }, 'Make a new key');
      if (replace !== 'Make a new key') return;
    }
    const name = await vscode.window.showInputBox({
      title: 'Postgres Agent: Create Approval Key',
      prompt: 'Your name as an approver (decisions signed with this key are recorded under it)',
      validateInput: (value) => (NAME.test(value) ? undefined : 'Letters, digits, dot, dash and underscore (up to 64).'),
    });
    if (name === undefined) return;
    const roles = await vscode.window.showInputBox({ title: 'Postgres Agent: Create Approval Key', prompt: 'Your roles, comma-separated (e.g. dba), or empty' });
    if (roles === undefined) return;
    const services = coreServices();
    try {
      await services.checkNewApprover(services.workspacePaths(this.workspaceDir), name);
    } catch (error) {
      const e = services.toAgentError(error);
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      return;
    }
    const { privateKey } = generateKeyPairSync('ed25519');
    const publicKey = services.publicKeyText(privateKey);
    try {
      await services.addApprover(services.workspacePaths(this.workspaceDir), { name, publicKey, roles: roles.split(',').map((r) => r.trim()).filter((r) => r !== '') });
    } catch (error) {
      const e = services.toAgentError(error);
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      return;
    }
    await this.secrets.store(APPROVAL_KEY_SECRET, JSON.stringify({ name, pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() }));
    this.logger.info('approval key created', { name });
    void vscode.window.showInformationMessage(`Decisions made here are now signed as "${name}"; its public key is in .pgagent/config.json (commit it for your team).`);
  }
}
