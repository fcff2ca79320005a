// Build step (esbuild.mjs): writes the generated sample database as a PGlite data-directory tarball to
// the path given, so the extension and the CLI ship it and a first open restores it (openSampleDb.ts).
import { writeFileSync } from 'node:fs';
import { buildSampleImage } from './openSampleDb';

const out = process.argv[2];
if (!out) throw new Error('usage: writeSampleImage <file.tar.gz>');
void buildSampleImage().then((image) => writeFileSync(out, image));
