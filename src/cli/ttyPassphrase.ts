/**
 * The passphrase of a signing key, asked on the controlling terminal only (SPEC §5 3a): /dev/tty is opened
 * for reading and writing, so stdin, a pipe, a flag or an environment variable can never answer it. A process
 * without a controlling terminal (an agent's tool call, a CI job) gets a refusal naming why.
 */
import { openSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import { AgentError } from '../core/platform/errors';

const CONTROLLING_TERMINAL = '/dev/tty';

function noTerminal(cause?: unknown): AgentError {
  return new AgentError(
    'APPROVAL_POLICY',
    "A signing key's passphrase is asked on the controlling terminal, and this process has none (run by a program, not typed in a terminal): nothing was signed.",
    'Run the command yourself in a terminal. There is deliberately no flag, environment variable or pipe for the passphrase.',
    { cause },
  );
}

/** Reads one line with echo off; Ctrl-C or Ctrl-D give up (nothing is signed). */
export async function askPassphraseOnTty(question: string): Promise<string> {
  if (process.platform === 'win32') throw noTerminal();
  let inFd: number;
  let outFd: number;
  try {
    inFd = openSync(CONTROLLING_TERMINAL, 'r');
    outFd = openSync(CONTROLLING_TERMINAL, 'w');
  } catch (error) {
    throw noTerminal(error);
  }
  const input = new ReadStream(inFd);
  const output = new WriteStream(outFd);
  try {
    // Echo off before the question appears, so nothing typed after it is ever shown.
    input.setRawMode(true);
    output.write(question);
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      input.on('error', reject);
      input.on('data', (chunk: Buffer) => {
        for (const char of chunk.toString('utf8')) {
          if (char === '\r' || char === '\n') {
            resolve(typed);
            return;
          }
          if (char === '\u0003' || (char === '\u0004' && typed === '')) {
            reject(new AgentError('APPROVAL_POLICY', 'No passphrase given: nothing was signed.'));
            return;
          }
          if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
          else if (char >= ' ') typed += char;
        }
      });
    });
  } finally {
    input.setRawMode(false);
    output.write('\n');
    input.destroy();
    output.destroy();
  }
}

/** Asks twice (making a key): a typo in a passphrase nobody can see would lock its owner out. */
export async function newPassphrase(
  ask: ((question: string) => Promise<string>) | undefined,
  what: string,
): Promise<string> {
  if (!ask) throw noTerminal();
  const first = await ask(`Passphrase for ${what} (8 characters or more): `);
  const second = await ask('The same passphrase again: ');
  if (first !== second)
    throw new AgentError(
      'BAD_INPUT',
      'The two passphrases differ: nothing was made.',
      'Run the command again and type the same passphrase twice.',
    );
  return first;
}
