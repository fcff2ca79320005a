// Team mode (issue 12): with team.databaseUrl in .pgagent/config.json, job checkpoints live in the team
// database (schema pgagent) and the lease in Redis, so a job started in one clone of a repository is
// continued from another clone that has only the job folder (it travels with the repository).
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import { call, inTactical, PLAN_V1, planTurn } from '../../support/jobScript';
import { queryValue } from '../../support/scratchDatabase';
import type { ScriptedModelServer } from '../../support/scriptedModelServer';
import { startScriptedModelServer } from '../../support/scriptedModelServer';
import type { ScratchDatabase } from '../../support/services';
import {
  createScratchDatabase,
  dropRedisPrefix,
  execSql,
  postgresAvailable,
  REDIS_URL,
  redisAvailable,
  redisPrefix,
} from '../../support/services';
import { SHOP_SCHEMA } from '../../support/shopSchema';
import { scriptedModelEnv } from '../../support/shopDatabase';

describe.runIf(postgresAvailable && redisAvailable)('team mode: one job, two clones of the repository', () => {
  let data: ScratchDatabase;
  let team: ScratchDatabase;
  let server: ScriptedModelServer;
  let cloneA: string;
  let cloneB: string;
  const jobIds: string[] = [];
  // The file's own ticket prefix: the default one is VS Code's, which an E2E suite running at the same time
  // watches (guardTwoGuards); its toasts must not be this file's job tickets. (Leases are per job id.)
  const prefix = redisPrefix('team-mode');
  const job = (clone: string, argv: string[]) =>
    runPgAgent(['job', '--db', data.url, '--workspace', clone, ...argv], {
      cwd: clone,
      env: { ...scriptedModelEnv(server), REDIS_URL, PGAGENT_REDIS_PREFIX: prefix },
    });
  const makeClone = (name: string) => {
    const dir = mkdtempSync(join(tmpdir(), `pgagent-team-${name}-`));
    mkdirSync(join(dir, '.pgagent'));
    writeFileSync(join(dir, '.pgagent', 'config.json'), JSON.stringify({ team: { databaseUrl: team.url } }));
    return dir;
  };

  beforeAll(async () => {
    data = await createScratchDatabase();
    team = await createScratchDatabase();
    await execSql(data.url, SHOP_SCHEMA);
  });
  afterAll(async () => {
    const redis = new Redis(REDIS_URL);
    for (const id of jobIds) await redis.del(`pgagent:lease:${id}`, `pgagent:lease-token:${id}`);
    await dropRedisPrefix(redis, prefix);
    await data?.drop();
    await team?.drop();
  });
  beforeEach(async () => {
    server = await startScriptedModelServer();
    cloneA = makeClone('a');
    cloneB = makeClone('b');
  });
  afterEach(async () => {
    await server.close();
    rmSync(cloneA, { recursive: true, force: true });
    rmSync(cloneB, { recursive: true, force: true });
  });

  it('plans in clone A, and clone B (job folder only) shows the review and approves it to completion', async () => {
    server.script(planTurn(PLAN_V1));
    const created = await job(cloneA, ['new', '--json', '--', 'Archive cancelled orders']);
    expect(created.code, created.stderr).toBe(0);
    const id = (JSON.parse(created.stdout) as { job: { id: string } }).job.id;
    jobIds.push(id);
    expect(existsSync(join(cloneA, '.pgagent', 'checkpoints'))).toBe(false); // nothing local: the team database has them
    expect(
      Number(await queryValue(team.url, `SELECT count(*) FROM pgagent.checkpoints WHERE thread_id = '${id}'`)),
    ).toBeGreaterThan(0);

    // "git clone": the job folder travels with the repository, the checkpoints do not.
    cpSync(join(cloneA, '.pgagent', 'jobs'), join(cloneB, '.pgagent', 'jobs'), { recursive: true });
    const shown = await job(cloneB, ['show', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { stop: { kind: string } }).stop.kind).toBe('review');

    server.script([inTactical({ functionCall: call('job_complete', { summary: 'archived nothing: a dry run' }) })]);
    const approved = await job(cloneB, ['approve', id, '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      job: { id, status: 'completed' },
      stop: { kind: 'completed' },
    });
  });

  it('says which team database it cannot reach, and touches nothing', async () => {
    writeFileSync(
      join(cloneA, '.pgagent', 'config.json'),
      JSON.stringify({ team: { databaseUrl: 'postgres://postgres@127.0.0.1:1/none' } }),
    );
    server.script(planTurn(PLAN_V1));
    const run = await job(cloneA, ['new', '--json', '--', 'Archive cancelled orders']);
    expect(run.code).toBe(1);
    const failure = JSON.parse(run.stdout) as { error: { code: string; message: string } };
    expect(failure.error.code).toBe('DB_UNREACHABLE');
    expect(failure.error.message).toContain('127.0.0.1:1');
    expect(server.requests).toHaveLength(0);
  });
});
