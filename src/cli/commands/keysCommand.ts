/**
 * `pg-agent keys new --name NAME [--roles R1,R2] | protect NAME | list`: Ed25519 key pairs for signing
 * decisions. The private key is encrypted with a passphrase typed twice on the controlling terminal and
 * stored in $XDG_CONFIG_HOME/pg-agent/keys/NAME.key (0600), outside every workspace. Making a key never makes
 * an approver (SPEC §5 3a): it prints the public key and the command an admin runs to enrol it.
 */
import { createKey, keysDir, listKeys, protectKey } from '../../core/approvals/keyFiles';
import { AgentError } from '../../core/platform/errors';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { newPassphrase } from '../ttyPassphrase';

export const keysCommand: CliCommand = {
  name: 'keys',
  summary: 'make and list the keys that sign your approval decisions (passphrase-protected)',
  usage: 'pg-agent keys new --name NAME [--roles R1,R2] [--json] | protect NAME | list [--json]',
  options: { name: { type: 'string' }, roles: { type: 'string' } },
  optionsHelp: `  --name NAME         the key's name (letters, digits, . _ -); decisions signed with it are recorded under it
  --roles R1,R2       the roles to ask the admin for (printed in the enrol command; the key itself has none)`,
  description:
    'new: makes an Ed25519 key pair, asks a passphrase twice on the terminal and stores the private key encrypted\n' +
    '(scrypt + AES-256-GCM) in $XDG_CONFIG_HOME/pg-agent/keys/NAME.key (mode 0600). It does not make you an approver:\n' +
    'an admin enrols the printed public key (`pg-agent policy enroll`). Prints {"name","publicKey","enroll"} with --json.\n' +
    'protect: encrypts a key made before passphrases (NAME.pem), which is refused for signing until then.\n' +
    '`pg-agent approvals approve` asks the passphrase on the terminal (--key NAME picks one when you have several).',
  async run(context) {
    const { args, io } = context;
    const [action, target, ...extra] = args.positionals;
    if (extra.length > 0 || (action !== 'protect' && target !== undefined))
      throw new AgentError('BAD_INPUT', `Unexpected arguments: ${[target, ...extra].join(' ')}.`);
    switch (action) {
      case 'new': {
        const name = args.options.name;
        if (typeof name !== 'string' || name === '')
          throw new AgentError('BAD_INPUT', 'keys new needs --name NAME.', 'e.g. pg-agent keys new --name alice');
        const roles =
          typeof args.options.roles === 'string'
            ? args.options.roles
                .split(',')
                .map((r) => r.trim())
                .filter((r) => r !== '')
            : [];
        const key = await createKey(io.env, name, await newPassphrase(io.passphrase, `the new key "${name}"`));
        const enroll = `pg-agent policy enroll ${key.name} --key ${key.publicKey}${roles.length > 0 ? ` --roles ${roles.join(',')}` : ''}`;
        if (args.flags.json) io.stdout(`${JSON.stringify({ name: key.name, publicKey: key.publicKey, enroll })}\n`);
        else
          io.stdout(
            `Key "${key.name}" made.\n  private key: ${key.file} (encrypted with your passphrase; only you can read the file)\n  public key:  ${key.publicKey}\n` +
              `It is not an approver yet. Give the public key to your admin, who enrols it with:\n  ${enroll}\n`,
          );
        return EXIT.ok;
      }
      case 'protect': {
        if (target === undefined)
          throw new AgentError(
            'BAD_INPUT',
            'keys protect needs the name of the key.',
            'e.g. pg-agent keys protect alice',
          );
        const key = await protectKey(io.env, target, await newPassphrase(io.passphrase, `the key "${target}"`));
        if (args.flags.json) io.stdout(`${JSON.stringify({ name: key.name, publicKey: key.publicKey })}\n`);
        else io.stdout(`Key "${key.name}" is now encrypted in ${key.file}; the unencrypted file was removed.\n`);
        return EXIT.ok;
      }
      case 'list':
      case undefined: {
        const names = await listKeys(io.env);
        if (args.flags.json) io.stdout(`${JSON.stringify({ keys: names, dir: keysDir(io.env) })}\n`);
        else
          io.stdout(
            names.length === 0
              ? `No keys in ${keysDir(io.env)}. Make one with: pg-agent keys new --name NAME\n`
              : `${names.join('\n')}\n`,
          );
        return EXIT.ok;
      }
      default:
        throw new AgentError('BAD_INPUT', `Unknown keys action "${action}".`, 'Use new, protect or list.');
    }
  },
};
