/**
 * `npm run demo` (`pg-agent demo`, a real process on the embedded sample database): its held DELETE is printed
 * once, and running the demo again finds the same pending ticket instead of leaving a second identical one.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pgAgentProcess } from '../../support/cliProcess';

describe('pg-agent demo', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-demo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const demo = () =>
    pgAgentProcess(['demo'], { cwd: dir, env: { USER: 'newcomer', HOME: dir, XDG_CONFIG_HOME: join(dir, '.config') } });

  it('prints its DELETE once; run again, it holds the same ticket', { timeout: 300_000 }, async () => {
    const first = await demo();
    expect(first.code, first.stderr).toBe(0);
    const deletes = first.stdout.split('\n').filter((line) => /^\s*DELETE FROM orders\b/.test(line));
    expect(deletes).toHaveLength(1);
    const ticket = /Held for approval: ticket (tkt_\w+)/.exec(first.stdout)?.[1];
    expect(ticket).toBeDefined();
    const second = await demo();
    expect(second.code, second.stderr).toBe(0);
    expect(/Held for approval: ticket (tkt_\w+)/.exec(second.stdout)?.[1]).toBe(ticket);
    const approvals = join(dir, '.pgagent', 'approvals');
    const tickets = readdirSync(approvals)
      .filter((name) => name.endsWith('.json'))
      .map((name) => JSON.parse(readFileSync(join(approvals, name), 'utf8')) as { id: string; status: string });
    expect(tickets).toEqual([expect.objectContaining({ id: ticket, status: 'PENDING_APPROVAL' })]);
  });
});
