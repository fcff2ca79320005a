/**
 * `pg-agent connect`: Test Connection in a terminal. Checks the connection the flags name one step at a
 * time (SSH tunnel, reaching the server, TLS, login, a read), prints each step as it passes, and for the
 * first that fails, why and what to do. Exit 0 when every step passed, 1 otherwise.
 */
import { STEP_TITLES, testConnection } from '../../core/db/testConnection';
import type { StepResult } from '../../core/db/testConnection';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';

export const connectCommand: CliCommand = {
  name: 'connect',
  summary: 'test the connection step by step: SSH tunnel, server, TLS, login, a read',
  usage: 'pg-agent connect [--db URL | --connection NAME] [--json]',
  options: {},
  async run({ args, io, target, connectOptions }) {
    const resolved = await target();
    if (resolved.kind === 'sample') {
      io.stderr('The sample database needs no connection: name a server with --db or --connection.\n');
      return EXIT.badInput;
    }
    const print = (step: StepResult) => {
      if (args.flags.json) return;
      const line = `${step.ok ? '✓' : '✗'} ${STEP_TITLES[step.step]}: ${step.ok ? step.detail : (step.error?.message ?? step.detail)}`;
      io.stdout(`${line}\n`);
      if (!step.ok && step.error?.advice) io.stdout(`  ${step.error.advice}\n`);
    };
    const steps = await testConnection(resolved, connectOptions(), print);
    const ok = steps.length > 0 && steps.every((s) => s.ok);
    if (args.flags.json) io.stdout(`${JSON.stringify({ ok, steps }, null, 2)}\n`);
    return ok ? EXIT.ok : EXIT.failed;
  },
};
