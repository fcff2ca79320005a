/** `pg-agent` entry point: wires the real terminal and environment to the runner. */
import { createInterface } from 'node:readline/promises';
import { runCli } from './run';
import { askPassphraseOnTty } from './ttyPassphrase';

/** One question on the terminal; the interface is closed again so stdin does not keep the process alive. */
async function prompt(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin,
  prompt,
  passphrase: askPassphraseOnTty,
  isTTY: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  env: process.env,
  cwd: process.cwd(),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `pg-agent: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
