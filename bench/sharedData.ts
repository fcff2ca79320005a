// Public benchmark data lives in shared/data/<name>/ beside the repository, never inside it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export function dataDir(name: string): string {
  const candidates = [
    join(process.cwd(), '..', 'shared', 'data', name),
    join(process.cwd(), '..', '..', 'shared', 'data', name),
  ];
  return candidates.find((dir) => existsSync(dir)) ?? candidates[0] ?? name;
}
