/** Loads dist/services.js the first time a feature needs the core, and only then. */
import * as path from 'node:path';
import type * as Services from './services';

export type CoreServices = typeof Services;

let loaded: CoreServices | undefined;

export function coreServices(): CoreServices {
  // A computed path keeps esbuild from inlining the services bundle into extension.js; a synchronous
  // require because the extension is a CommonJS bundle.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require(path.join(__dirname, 'services.js')) as CoreServices;
  return loaded;
}

/**
 * The core as constructors receive it (issue 23: no module-level locator): `activate` makes one loader and
 * passes it, or a narrower port, to what needs the core; the first call loads dist/services.js.
 */
export type CoreLoader = () => CoreServices;
