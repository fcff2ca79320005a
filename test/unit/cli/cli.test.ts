import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandArgs, UsageError } from '../../../src/cli/args';
import { COMMANDS } from '../../../src/cli/run';
import { runPgAgent } from '../../support/cliHarness';

const cwd = mkdtempSync(join(tmpdir(), 'pgagent-cli-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('parseCommandArgs', () => {
  it('takes everything after -- as text, even when it starts with a dash', () => {
    const args = parseCommandArgs(['--json', '--', '-- a comment', '--db'], {}, '/w');
    expect(args.flags.json).toBe(true);
    expect(args.flags.db).toBeUndefined();
    expect(args.text).toBe('-- a comment --db');
  });

  it('keeps a lone - as the stdin marker', () => {
    expect(parseCommandArgs(['-'], {}, '/w').text).toBe('-');
  });

  it('parses the common flags', () => {
    const args = parseCommandArgs(
      ['--db', 'sample', '--workspace', '/x', '--no-input', '--timeout-ms', '500', '--max-rows', '10'],
      {},
      '/w',
    );
    expect(args.flags).toMatchObject({
      db: 'sample',
      workspace: '/x',
      noInput: true,
      timeoutMs: 500,
      maxRows: 10,
      json: false,
    });
  });

  it.each([
    [['--bogus']],
    [['--timeout-ms', 'soon']],
    [['--max-rows', '0']],
    [['--db', 'sample', '--connection', 'x']],
  ])('rejects %j as a usage error', (argv) => {
    expect(() => parseCommandArgs(argv, {}, '/w')).toThrow(UsageError);
  });
});

describe('pg-agent', () => {
  it('exits 2 with the command list when run without a command', async () => {
    const run = await runPgAgent([], { cwd });
    expect(run.code).toBe(2);
    for (const command of COMMANDS) expect(run.stdout).toContain(command.name);
  });

  it('exits 2 on an unknown command and an unknown flag', async () => {
    expect((await runPgAgent(['frobnicate'], { cwd })).code).toBe(2);
    const run = await runPgAgent(['schema', '--frobnicate'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--frobnicate');
  });

  it.each(COMMANDS.map((c) => [c.name]))('has --help for %s, exit 0, listing the common flags', async (name) => {
    const run = await runPgAgent([name, '--help'], { cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`pg-agent ${name}`);
    expect(run.stdout).toContain('--no-input');
  });

  it('reports a malformed --db URL as bad input (exit 2) with a JSON error', async () => {
    const run = await runPgAgent(['schema', '--json', '--db', 'mysql://x@y/z'], { cwd });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'invalid', error: { code: 'CONFIG_INVALID' } });
  });

  it('reports an unknown profile as bad input', async () => {
    const run = await runPgAgent(['schema', '--connection', 'nope'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No connection profile named "nope"');
  });
});
