// `pg-agent health` bounded: a check with more offenders than it lists reads only the worst N (SQL LIMIT) and
// says how many more there are — in the report (`more`), in the text, and through the CLI's --limit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { runHealth } from '../../../../src/core/dba/runHealth';
import { silentLogger } from '../../../../src/core/platform/logger';
import { renderHealth } from '../../../../src/core/present/renderHealth';
import { pgAgentProcess } from '../../../support/cliProcess';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

/** Tables whose foreign key has no index: `missing_fk_indexes` offenders, the bigger tables first. */
const OFFENDERS = 7;

describe.runIf(postgresAvailable)('health lists at most N offenders per check and counts the rest', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase('tree50k_health');
    const ddl = ['CREATE TABLE parent (id int PRIMARY KEY);', 'INSERT INTO parent SELECT generate_series(1, 10);'];
    for (let i = 0; i < OFFENDERS; i++) {
      ddl.push(`CREATE TABLE child_${i} (id int PRIMARY KEY, parent_id int REFERENCES parent(id));`);
      // child_6 holds the most rows: it comes first.
      ddl.push(`INSERT INTO child_${i} SELECT g, 1 + g % 10 FROM generate_series(1, ${(i + 1) * 100}) g;`);
    }
    await execSql(scratch.url, `${ddl.join('\n')}\nANALYZE;`);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('with more offenders than N: the worst N listed, "and N more" said', async () => {
    const report = await runHealth(db, { only: ['missing_fk_indexes'], maxFindings: 3 });
    const [check] = report.checks;
    expect(check?.status).toBe('findings');
    expect(check?.findings.map((f) => f.object)).toEqual(['public.child_6', 'public.child_5', 'public.child_4']);
    expect(check?.more).toBe(OFFENDERS - 3);
    expect(renderHealth(report)).toContain(`… and ${OFFENDERS - 3} more (the worst 3 are listed`);
    // The summary counts only what is listed, and says so.
    expect(report.summary).toMatchObject({ warning: 3, unlisted: OFFENDERS - 3 });
    expect(renderHealth(report)).toContain(
      `at least 0 critical, 3 warnings, 0 info (${OFFENDERS - 3} more not listed)`,
    );
  });

  it('with no more offenders than N: all listed, no "more"', async () => {
    const report = await runHealth(db, { only: ['missing_fk_indexes'] });
    const [check] = report.checks;
    expect(check?.findings).toHaveLength(OFFENDERS);
    expect(check?.more).toBeUndefined();
    expect(report.summary.unlisted).toBe(0);
    expect(renderHealth(report)).not.toContain('more (the worst');
    expect(renderHealth(report)).not.toContain('at least');
  });

  it('pg-agent health --limit N bounds the JSON and the text the same way', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'tree50k-health-'));
    try {
      const env = { HOME: ws, XDG_CONFIG_HOME: join(ws, '.config') };
      const args = ['health', '--check', 'missing_fk_indexes', '--limit', '2', '--db', scratch.url, '--workspace', ws];
      const json = await pgAgentProcess([...args, '--json'], { cwd: ws, env });
      expect(json.code, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout) as { checks: { findings: unknown[]; more?: number }[] };
      expect(report.checks[0]?.findings).toHaveLength(2);
      expect(report.checks[0]?.more).toBe(OFFENDERS - 2);
      const text = await pgAgentProcess(args, { cwd: ws, env });
      expect(text.stdout).toContain(`… and ${OFFENDERS - 2} more`);
      const bad = await pgAgentProcess([...args.slice(0, 3), '--limit', '0', '--db', scratch.url], { cwd: ws, env });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('--limit takes a whole number');
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
