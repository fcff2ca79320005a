/** The names in a folder, or none when the folder does not exist yet (stores create theirs on first write). */
import { readdir } from 'node:fs/promises';
import { isErrno } from './errno';

export async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    throw error;
  }
}
