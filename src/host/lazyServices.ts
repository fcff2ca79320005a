/** Loads dist/services.js the first time a feature needs the core, and only then. */
import * as path from 'node:path';
import type * as Services from './services';

export type CoreServices = typeof Services;

/**
 * The core as constructors receive it (issue 23: no module-level locator): `activate` makes one loader and
 * passes it, or a narrower port, to what needs the core; the first call loads dist/services.js.
 */
export type CoreLoader = () => CoreServices;

/** The window's loader: dist/services.js is required on its first call, never before (activation stays light). */
export function coreOnFirstUse(dir: string = __dirname): CoreLoader {
  let loaded: CoreServices | undefined;
  // A computed path keeps esbuild from inlining the services bundle into extension.js; a synchronous
  // require because the extension is a CommonJS bundle.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return () => (loaded ??= require(path.join(dir, 'services.js')) as CoreServices);
}
