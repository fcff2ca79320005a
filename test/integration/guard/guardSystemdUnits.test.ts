/**
 * The systemd units shipped in contrib/systemd/ start `pg-agent guard` with flags the real command knows:
 * every `--flag` of each ExecStart is in `pg-agent guard --help` (dist/cli.js), so a unit copied from the
 * docs does not fail at start with an unknown flag.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH } from '../../support/mcpClient';

const CONTRIB = join(__dirname, '..', '..', '..', 'contrib', 'systemd');
const units = [
  join(CONTRIB, 'pg-agent-guard.service'),
  ...readdirSync(join(CONTRIB, 'pg-agent-guard.service.d')).map((name) =>
    join(CONTRIB, 'pg-agent-guard.service.d', name),
  ),
];

describe('the systemd units of the guard', () => {
  const help = execFileSync(process.execPath, [CLI_PATH, 'guard', '--help'], { encoding: 'utf8' });

  it.each(units)('%s starts pg-agent guard with flags its --help lists', (unit) => {
    const starts = readFileSync(unit, 'utf8')
      .split('\n')
      .filter((line) => /^ExecStart=\S/.test(line));
    expect(starts.length).toBeGreaterThan(0);
    for (const line of starts) {
      expect(line).toMatch(/^ExecStart=\/usr\/local\/bin\/pg-agent guard /);
      const flags = line.match(/--[a-z][a-z-]*/g) ?? [];
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of flags)
        expect(help, `${flag} in pg-agent guard --help`).toMatch(new RegExp(`^\\s+${flag}\\b`, 'm'));
    }
  });
});
