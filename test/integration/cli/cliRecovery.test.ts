// Issue 25, SPEC §6: `pg-agent undo <ticket>` and `pg-agent quarantine list|purge` from a terminal. A dropped
// table is listed in the quarantine; undo is held (exit 3) until approved; once run, the table is back as it was.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { queryValue } from '../../support/scratchDatabase';

describe.runIf(postgresAvailable)('pg-agent undo and quarantine (issue 25)', () => {
  let scratch: ScratchDatabase;
  let workspace: string;
  const cli = (...argv: string[]) =>
    runPgAgent([...argv.slice(0, 1), '--db', scratch.url, '--workspace', workspace, ...argv.slice(1)], {
      cwd: workspace,
      env: { USER: 'tester' },
    });
  const ticketOf = (stdout: string) => /ticket (tkt_[a-z2-7]{20})/.exec(stdout)?.[1] ?? '';
  const rows = () => queryValue(scratch.url, "SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM notes");

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      "CREATE TABLE notes (id int PRIMARY KEY, name text); INSERT INTO notes SELECT g, 'n' || g FROM generate_series(1, 20) g; ANALYZE notes;",
    );
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-cli-recovery-'));
  });
  afterAll(async () => {
    await scratch?.drop();
  });

  it('drop → quarantine list → undo held → approved and run → the table is back', async () => {
    const before = await rows();
    const held = await cli('sql', '--no-input', '--', 'DROP TABLE notes');
    expect(held.code).toBe(3);
    expect(held.stdout).toContain('  Way back: public.notes (20 rows');
    const drop = ticketOf(held.stdout);
    expect((await cli('approvals', 'approve', drop)).code).toBe(0);
    const ran = await cli('exec', '--ticket', drop);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`  way back: pg-agent undo ${drop}\n`);

    const list = await cli('quarantine', 'list', '--json');
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ ticket: drop, kind: 'table', original: 'public.notes' }),
    ]);

    const undo = await cli('undo', drop);
    expect(undo.code).toBe(3);
    expect(undo.stdout).toContain(`The way back from ticket ${drop} (from its quarantine)`);
    expect(undo.stdout).toContain('SET SCHEMA "public"');
    expect(await queryValue(scratch.url, "SELECT to_regclass('public.notes')")).toBeNull();
    const restore = ticketOf(undo.stdout.slice(undo.stdout.indexOf('Held for approval')));
    expect((await cli('approvals', 'approve', restore)).code).toBe(0);
    expect((await cli('exec', '--ticket', restore)).code).toBe(0);
    expect(await rows()).toBe(before);
    expect((await cli('quarantine', 'list')).stdout).toBe('The quarantine is empty.\n');
  });

  it('bad input: undo without a ticket, of a ticket that did not run, and an unknown quarantine action', async () => {
    expect((await cli('undo')).code).toBe(2);
    const held = await cli('sql', '--no-input', '--', "UPDATE notes SET name = 'x' WHERE id = 1");
    const pending = await cli('undo', ticketOf(held.stdout));
    expect(pending.code).toBe(2);
    expect(pending.stderr).toContain('is PENDING_APPROVAL: only an executed ticket has something to undo');
    expect((await cli('quarantine', 'empty')).code).toBe(2);
    expect((await cli('quarantine', 'purge')).stderr).toContain('Nothing in the quarantine has expired');
  });
});
