// vitest globalSetup of the e2e project: installs the E2E tools once (cached outside the repo), checks that
// the packaged extension exists and installs it once into an extensions folder every suite's code-server
// copies (`inject('e2eInstalledExtensions')`); removes that folder at the end of the run.
import { existsSync, rmSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { TestProject } from 'vitest/node';
import { installExtensionOnce, repoRoot, vsixPath } from './codeServer';
import { ensureE2eTools } from './tools';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The extensions folder with the packaged extension installed (see startCodeServer's `installed`). */
    e2eInstalledExtensions: string;
  }
}

// vitest loads a globalSetup file through its default export; this is the one place a default export is
// required (everything else in the project uses named exports).
export default async function setup(project: TestProject): Promise<() => void> {
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
  const installed = await installExtensionOnce(vsixPath);
  project.provide('e2eInstalledExtensions', installed);
  return () => rmSync(dirname(installed), { recursive: true, force: true });
}

function shown(path: string): string {
  const inRepo = relative(repoRoot, path);
  return inRepo.startsWith('..') ? path : inRepo;
}
