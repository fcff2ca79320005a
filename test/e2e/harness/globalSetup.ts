// vitest globalSetup of the e2e project: installs the E2E tools once (cached outside the repo) and checks
// that the packaged extension the suite installs into code-server exists.
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { repoRoot, vsixPath } from './codeServer';
import { ensureE2eTools } from './tools';

// vitest loads a globalSetup file through its default export; this is the one place a default export is
// required (everything else in the project uses named exports).
export default async function setup(): Promise<void> {
  const started = Date.now();
  const tools = await ensureE2eTools();
  process.stderr.write(
    `[e2e] tools ready in ${Math.round((Date.now() - started) / 1000)} s: chromium ${tools.chromium}, node ${tools.node24}, code-server ${tools.codeServerEntry}\n`,
  );
  if (!existsSync(vsixPath)) {
    throw new Error(
      `The packaged extension ${shown(vsixPath)} is missing: run \`npm run package\` first (\`npm test\` and \`npm run test:e2e\` do it for you).`,
    );
  }
}

function shown(path: string): string {
  const inRepo = relative(repoRoot, path);
  return inRepo.startsWith('..') ? path : inRepo;
}
