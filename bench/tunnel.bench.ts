// What an SSH tunnel costs (issue 27): opening a connection and a small read, direct vs through an sshd
// this bench starts on loopback (so the numbers are the tunnel's own overhead: SSH framing and crypto, one
// more hop), and the tunnel's first open (handshake, host key check, key login).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { acquireTunnel } from '../src/core/db/tunnel/sshTunnel';
import { silentLogger } from '../src/core/platform/logger';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { startTestSshd } from '../test/support/testSshd';
import { percentile, report, timeRuns } from './stats';

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench');
  const server = await startTestSshd();
  const knownHostsFile = join(server.dir, 'pins', 'known_hosts');
  mkdirSync(join(server.dir, 'pins'));
  const ssh = { knownHostsFile, confirmHostKey: () => Promise.resolve(true) };
  const tunnel = {
    host: '127.0.0.1',
    port: server.port,
    user: server.user,
    auth: 'key' as const,
    keyFile: server.clientKey.privateKey,
  };
  const direct = parseConnectionUrl(scratch.url);
  const tunnelled = { ...direct, host: '127.0.0.1', port: 5432, ssh: tunnel };
  try {
    const opens = await timeRuns(10, async () => {
      const lease = acquireTunnel(tunnel, { ...ssh, env: {}, logger: silentLogger });
      await lease.tunnel.open();
      lease.release();
    });
    report('tunnel open (TCP + SSH handshake + host key + ed25519 login), p50 of 10', percentile(opens, 50), 'ms');
    for (const [name, target] of [
      ['direct', direct],
      ['through the tunnel', tunnelled],
    ] as const) {
      const connects = await timeRuns(20, async () =>
        (await openPostgres(target, { logger: silentLogger, ssh, maxConnections: 1 })).close(),
      );
      report(`${name}: open a pool + first connection, p50 of 20`, percentile(connects, 50), 'ms');
      const db = await openPostgres(target, { logger: silentLogger, ssh, maxConnections: 1 });
      try {
        await db.query('SELECT 1');
        const reads = await timeRuns(300, () => db.query('SELECT 1'));
        report(`${name}: SELECT 1, p50 of 300`, percentile(reads, 50), 'ms');
        const big = await timeRuns(20, () => db.query('SELECT g, md5(g::text) FROM generate_series(1, 10000) g'));
        report(`${name}: 10,000 rows (~450 KB), p50 of 20`, percentile(big, 50), 'ms');
      } finally {
        await db.close();
      }
    }
  } finally {
    await server.stop();
    await scratch.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
