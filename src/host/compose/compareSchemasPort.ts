/** The port of "Compare Schemas…", built from the window's session, saved connections and the core (loaded on first use). */
import type * as vscode from 'vscode';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../../core/platform/logger';
import type { ConnectionStore } from '../connection/connectionStore';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import { showError } from '../ui/showError';
import type { CompareSchemasPort } from '../diff/compareSchemasCommand';

export function compareSchemasPort(
  session: DatabaseSession,
  store: ConnectionStore,
  core: CoreLoader,
  logger: Logger,
  output: vscode.LogOutputChannel,
): CompareSchemasPort {
  const activeName = () => {
    const choice = store.active();
    return choice.kind === 'sample' ? 'sample' : choice.name;
  };
  return {
    async active() {
      return session.use(async ({ db }) => ({
        label: db.label,
        snapshot: await db.withSession((s) => core().readDiffSnapshot(s)),
      }));
    },
    async others() {
      const names = (await store.profiles()).map((p) => p.name);
      return [...names, 'sample'].filter((n) => n !== activeName());
    },
    async snapshotOf(side) {
      const services = core();
      if (side.kind === 'file') return services.parseSnapshotFile(await readFile(side.path, 'utf8'), side.path);
      const password = side.name === 'sample' ? undefined : await store.password(side.name);
      const target =
        side.name === 'sample'
          ? ({ kind: 'sample' } as const)
          : services.resolveTarget({
              profile: side.name,
              profiles: await store.profiles(),
              ...(password ? { profilePassword: password } : {}),
              env: {},
            });
      const dir = store.workspaceDir;
      if (side.name === 'sample' && !dir) throw new Error('The sample database needs an open folder.');
      const db = await services.openDatabase(target, {
        sampleDbDir: services.workspacePaths(dir ?? '').sampleDb,
        sampleDbInWorker: true,
        sampleDbHeldBy: 'VS Code (Compare Schemas)',
        logger,
      });
      try {
        return await db.withSession((s) => services.readDiffSnapshot(s));
      } finally {
        await db.close();
      }
    },
    nextStep(a, b) {
      const services = core();
      const diff = services.diffSchemas(a, b);
      const steps = services.migrationSteps(diff.statements);
      const first = steps[0];
      if (!first) return undefined;
      return {
        sql: first.statements.map((s) => `${s};`).join('\n'),
        phase: first.phase,
        steps: steps.length,
        notes: diff.notes,
      };
    },
    showError: (error) => showError(core, error, output),
  };
}
