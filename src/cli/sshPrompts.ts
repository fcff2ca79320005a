/**
 * What an SSH tunnel asks of the person at the terminal: to accept a host key seen for the first time
 * (the fingerprint shown, the answer typed) and a key's passphrase or a hop's password (read from the
 * controlling terminal with echo off, never a flag or a pipe). With --no-input, or no terminal, nothing
 * is asked: an unknown host key is refused and a missing secret is an error naming the hop.
 */
import { ownKnownHostsFile } from '../core/config/ownConfig';
import type { SshOptions } from '../core/db/postgresDb';
import { describeHop } from '../core/db/tunnel/sshConfig';
import { AgentError } from '../core/platform/errors';
import type { CliIo } from './command';

export function cliSshOptions(io: CliIo, noInput: boolean): SshOptions {
  const prompt = !noInput && io.isTTY ? io.prompt : undefined;
  const passphrase = !noInput ? io.passphrase : undefined;
  return {
    knownHostsFile: ownKnownHostsFile(io.env),
    ...(prompt
      ? {
          confirmHostKey: async ({ hop, fingerprint, keyType }) => {
            io.stderr(
              `The authenticity of ${hop} can't be established.\n${keyType} key fingerprint is ${fingerprint}.\n`,
            );
            const answer = await prompt("Pin this key and connect (compare it with the host's own first)? [y/N] ");
            return /^y(es)?$/i.test(answer.trim());
          },
        }
      : {}),
    ...(passphrase
      ? {
          secret: async ({ kind, hop, name }) => {
            const question =
              kind === 'passphrase'
                ? `Passphrase for ${hop.keyFile ?? 'the key'} (${name}): `
                : `Password of ${describeHop(hop)}: `;
            try {
              return await passphrase(question);
            } catch (error) {
              throw new AgentError(
                'SSH_AUTH_FAILED',
                `${name} needs a ${kind} typed on the terminal, and this process has none.`,
                'Run the command in a terminal, or use ssh-agent (ssh-add the key) so nothing needs typing.',
                { cause: error },
              );
            }
          },
        }
      : {}),
  };
}
