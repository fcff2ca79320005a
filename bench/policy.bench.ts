// What reading the policy in force costs each execution (SPEC §5 3a: read afresh at every claim): the
// database's identity, both config files, and a connection per URL key that has to be resolved to know
// whether it governs this database.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { policyInForce } from '../src/core/approvals/policyInForce';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { percentile, report, timeRuns } from './stats';

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench');
  const root = mkdtempSync(join(tmpdir(), 'pgagent-bench-policy-'));
  const own = join(root, 'own.json');
  mkdirSync(join(root, 'ws', '.pgagent'), { recursive: true });
  const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  try {
    const target = parseConnectionUrl(scratch.url);
    const connection = `postgres://${target.user}@${target.host}:${target.port}/${target.database}`;
    const sources = { ownConfigFile: own, workspaceDir: join(root, 'ws') };
    const measure = async (name: string) => {
      const runs = await timeRuns(50, () => db.withSession((s) => policyInForce(s, connection, sources)));
      report(`${name}, p50 of 50`, percentile(runs, 50), 'ms');
    };
    writeFileSync(own, '{}');
    await measure('no policy anywhere (identity + two config reads)');
    writeFileSync(
      own,
      JSON.stringify({
        approval: {
          databases: { '1/x': { requireSignature: true } },
          connections: { [connection]: { twoPersonAbove: 'LOW' } },
        },
      }),
    );
    await measure('identity-keyed and same-URL entries (no connection needed)');
    writeFileSync(
      own,
      JSON.stringify({
        approval: {
          connections: {
            [`postgres://${target.user}@localhost:${target.port}/${target.database}`]: { requireSignature: true },
          },
        },
      }),
    );
    await measure('one URL key of another spelling (one connection to resolve it)');
  } finally {
    await db.close();
    rmSync(root, { recursive: true, force: true });
    await scratch.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
