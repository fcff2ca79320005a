/** The one path-confinement check: whether `path` is `root` or below it (both absolute, already resolved). */
import { isAbsolute, relative, sep } from 'node:path';

export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
