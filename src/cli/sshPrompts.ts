/**
 * What an SSH tunnel asks of the person at the terminal: to accept a host key seen for the first time
 * (the fingerprint shown, the answer typed) and a key's passphrase or a hop's password (read from the
 * controlling terminal with echo off, never a flag or a pipe). With --no-input, or no terminal, nothing
 * is asked: an unknown host key is refused and a missing secret is an error naming the hop.
 */
import { join } from 'node:path';
import { ownConfigDir } from '../core/config/ownConfig';
import type { SshOptions } from '../core/db/postgresDb';
import { describeHop } from '../core/db/tunnel/sshConfig';
import { AgentError } from '../core/platform/errors';
import type { CliIo } from './command';

/** pg-agent's known_hosts: the person's own config folder, shared with VS Code. */
export function knownHostsFile(io: Pick<CliIo, 'env'>): string {
  return join(ownConfigDir(io.env), 'known_hosts');
}

export function cliSshOptions(io: CliIo, noInput: boolean): SshOptions {
  const prompt = !noInput && io.isTTY ? io.prompt : undefined;
  const passphrase = !noInput ? io.passphrase : undefined;
  return {
    knownHostsFile: knownHostsFile(io),
    ...(prompt
      ? {
          confirmHostKey: async ({ hop, fingerprint, keyType }) => {
            io.stderr(`The authenticity of ${hop} can't be established.\n${keyType} key fingerprint is ${fingerprint}.\n`);
            const answer = await prompt('Pin this key and connect (compare it with the host\'s own first)? [y/N] ');
            return /^y(es)?$/i.test(answer.trim());
          },
        }
      : {}),
    ...(passphrase
      ? {
          secret: async ({ kind, hop, name }) => {
            const question = kind === 'passphrase' ? `Passphrase for ${hop.keyFile ?? 'the key'} (${name}): ` : `Password of ${describeHop(hop)}: `;
            try {
              return await passphrase(question);
            } catch (error) {
              throw new AgentError('SSH_AUTH_FAILED', `${name} needs a ${kind} typed on the terminal, and this process has none.`, 'Run the command in a terminal, or use ssh-agent (ssh-add the key) so nothing needs typing.', { cause: error });
            }
          },
        }
      : {}),
  };
}
