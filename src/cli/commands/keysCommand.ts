/**
 * `pg-agent keys new --name NAME [--role R]… [--json]`: an Ed25519 key pair for signing decisions. The
 * private key goes to $XDG_CONFIG_HOME/pg-agent/keys/NAME.pem (0600), outside every workspace; the public
 * key, name and roles go into .pgagent/config.json approval.approvers. `keys list` names your keys.
 */
import { addApprover, checkNewApprover } from '../../core/approvals/approverConfig';
import { createKey, keysDir, listKeys } from '../../core/approvals/keyFiles';
import { AgentError } from '../../core/errors';
import { workspacePaths } from '../../core/workspace';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';

export const keysCommand: CliCommand = {
  name: 'keys',
  summary: 'make and list the keys that sign your approval decisions',
  usage: 'pg-agent keys new --name NAME [--roles R1,R2] [--json] | list [--json]',
  options: { name: { type: 'string' }, roles: { type: 'string' } },
  optionsHelp: `  --name NAME         the approver's name (letters, digits, . _ -); decisions signed with it are recorded under it
  --roles R1,R2       roles of this approver in approval.approvers (for approval.policy.rolesFor)`,
  description:
    'new: makes an Ed25519 key pair; the private key is stored in $XDG_CONFIG_HOME/pg-agent/keys/ (mode 0600),\n' +
    'the public key, name and roles are added to .pgagent/config.json approval.approvers. Prints {"name","publicKey"}.\n' +
    '`pg-agent approvals approve` then signs with it (--key NAME picks one when you have several).',
  async run(context) {
    const { args, io } = context;
    const [action, ...extra] = args.positionals;
    if (extra.length > 0) throw new AgentError('BAD_INPUT', `Unexpected arguments: ${extra.join(' ')}.`);
    switch (action) {
      case 'new': {
        const name = args.options.name;
        if (typeof name !== 'string' || name === '') throw new AgentError('BAD_INPUT', 'keys new needs --name NAME.', 'e.g. pg-agent keys new --name alice');
        const roles = typeof args.options.roles === 'string' ? args.options.roles.split(',').map((r) => r.trim()).filter((r) => r !== '') : [];
        const paths = workspacePaths(args.flags.workspace);
        await checkNewApprover(paths, name);
        const key = await createKey(io.env, name);
        await addApprover(paths, { name: key.name, publicKey: key.publicKey, roles });
        if (args.flags.json) io.stdout(`${JSON.stringify({ name: key.name, publicKey: key.publicKey })}\n`);
        else io.stdout(`Key "${key.name}" made.\n  private key: ${key.file} (only you can read it)\n  public key:  ${key.publicKey} (added to approval.approvers in .pgagent/config.json${roles.length > 0 ? `, roles ${roles.join(', ')}` : ''})\n`);
        return EXIT.ok;
      }
      case 'list':
      case undefined: {
        const names = await listKeys(io.env);
        if (args.flags.json) io.stdout(`${JSON.stringify({ keys: names, dir: keysDir(io.env) })}\n`);
        else io.stdout(names.length === 0 ? `No keys in ${keysDir(io.env)}. Make one with: pg-agent keys new --name NAME\n` : `${names.join('\n')}\n`);
        return EXIT.ok;
      }
      default:
        throw new AgentError('BAD_INPUT', `Unknown keys action "${action}".`, 'Use new or list.');
    }
  },
};
