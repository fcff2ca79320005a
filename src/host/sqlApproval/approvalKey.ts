/**
 * This window's approval key (SPEC §5 3a): an Ed25519 private key kept in VS Code's SecretStorage, encrypted with
 * a passphrase (the CLI's envelope, keyEnvelope.ts) that the person types into VS Code's own password box each
 * time a decision is signed. SecretStorage alone is not enough: other extensions cannot read it through the API,
 * but it lives in the OS keychain, which any process of the same OS user (an agent's shell) can query. Making a
 * key enrols nobody: the admin enrols its public key (`pg-agent policy enroll`).
 */
import * as vscode from 'vscode';
import { generateKeyPairSync } from 'node:crypto';
import type { SigningKey } from '../../core/approvals/approvalPath';
import type { Logger } from '../../core/platform/logger';
import type { AgentError } from '../../core/platform/errors';
import type { CoreServices } from '../lazyServices';

/** The core's key envelope, loaded when called (host/compose/approvalKeyPort.ts). */
export interface ApprovalKeyPort extends Pick<
  CoreServices,
  'openPrivateKey' | 'parseEnvelope' | 'publicKeyText' | 'sealPrivateKey'
> {
  minPassphraseLength(): number;
  error: (...args: ConstructorParameters<typeof AgentError>) => AgentError;
}

export const APPROVAL_KEY_SECRET = 'postgresAgent.approvalKey';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TITLE = 'Postgres Agent: Create Approval Key';

export class ApprovalKeyStore {
  constructor(
    private readonly port: ApprovalKeyPort,
    private readonly secrets: vscode.SecretStorage,
    private readonly workspaceDir: string | undefined,
    private readonly logger: Logger,
  ) {}

  /** The stored entry: an encrypted key, or one made before passphrases (refused for signing). */
  private async stored(): Promise<{ name: string; envelope?: string } | undefined> {
    const text = await this.secrets.get(APPROVAL_KEY_SECRET);
    if (text === undefined) return undefined;
    try {
      const stored = JSON.parse(text) as { name?: unknown; envelope?: unknown; pem?: unknown };
      if (typeof stored.name !== 'string') throw new Error('not a stored key');
      return typeof stored.envelope === 'string'
        ? { name: stored.name, envelope: stored.envelope }
        : { name: stored.name };
    } catch (error) {
      // A damaged secret must not sign anything, nor silently drop to unsigned: the decision is refused.
      throw this.port.error(
        'CONFIG_INVALID',
        "The approval key in VS Code's secret storage cannot be read.",
        `Run "${TITLE}…" to make a new one.`,
        { cause: error },
      );
    }
  }

  /**
   * The key decisions are signed with, opened with the passphrase typed now; undefined when none was made
   * (decisions are then unsigned). No passphrase, a wrong one or a key stored without one: refused, nothing signed.
   */
  async current(): Promise<SigningKey | undefined> {
    const stored = await this.stored();
    if (!stored) return undefined;
    if (stored.envelope === undefined) {
      throw this.port.error(
        'APPROVAL_POLICY',
        `The approval key "${stored.name}" was stored without a passphrase, so it signs nothing any more.`,
        `Run "${TITLE}…" to make a passphrase-protected key, and ask your admin to enrol its public key.`,
      );
    }
    const passphrase = await vscode.window.showInputBox({
      title: `Sign as ${stored.name}`,
      prompt: `Passphrase of your approval key "${stored.name}"`,
      password: true,
      ignoreFocusOut: true,
    });
    if (passphrase === undefined || passphrase === '')
      throw this.port.error('APPROVAL_POLICY', 'No passphrase given: nothing was signed or decided.');
    const where = "the approval key in VS Code's secret storage";
    return {
      name: stored.name,
      privateKey: await this.port.openPrivateKey(this.port.parseEnvelope(stored.envelope, where), passphrase, where),
    };
  }

  /** Asks for a name and a passphrase (twice), makes the key pair and keeps it encrypted; prints the enrol command. */
  async create(): Promise<void> {
    const existing = await this.stored().catch(() => undefined);
    if (existing) {
      const replace = await vscode.window.showWarningMessage(
        `This VS Code already signs as "${existing.name}". Make a new key?`,
        { modal: true },
        'Make a new key',
      );
      if (replace !== 'Make a new key') return;
    }
    const min = this.port.minPassphraseLength();
    const name = await vscode.window.showInputBox({
      title: TITLE,
      prompt: 'Your name as an approver (decisions signed with this key are recorded under it)',
      validateInput: (value) =>
        NAME.test(value) ? undefined : 'Letters, digits, dot, dash and underscore (up to 64).',
    });
    if (name === undefined) return;
    const passphrase = await vscode.window.showInputBox({
      title: TITLE,
      prompt: `A passphrase for this key (${min} characters or more); you type it for every signed decision`,
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => (value.length >= min ? undefined : `${min} characters or more.`),
    });
    if (passphrase === undefined) return;
    const again = await vscode.window.showInputBox({
      title: TITLE,
      prompt: 'The same passphrase again',
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => (value === passphrase ? undefined : 'The two passphrases differ.'),
    });
    if (again !== passphrase) return;
    const { privateKey } = generateKeyPairSync('ed25519');
    const publicKey = this.port.publicKeyText(privateKey);
    await this.secrets.store(
      APPROVAL_KEY_SECRET,
      JSON.stringify({ name, envelope: await this.port.sealPrivateKey(name, privateKey, passphrase) }),
    );
    this.logger.info('approval key created', { name, workspace: this.workspaceDir ?? '' });
    const enroll = `pg-agent policy enroll ${name} --key ${publicKey}`;
    const copy = await vscode.window.showInformationMessage(
      `Decisions made here are now signed as "${name}" (its passphrase asked each time). It is not an approver until an admin enrols it: ${enroll}`,
      'Copy Enrol Command',
    );
    if (copy === 'Copy Enrol Command') await vscode.env.clipboard.writeText(enroll);
  }
}
