/**
 * For a test that counts the file reads of src/ (vi.mock of node:fs or node:fs/promises): the real module with one
 * read function replaced by one that records the path, then reads. Imports nothing itself, so that a vi.mock
 * factory may load it (`await import(...)`) while the module it mocks is being made.
 */
export function countingReads<M extends object>(real: M, name: keyof M & string, files: string[]): M {
  const read = real[name] as (...args: unknown[]) => unknown;
  const counting = (path: unknown, ...rest: unknown[]) => {
    files.push(String(path));
    return read(path, ...rest);
  };
  return { ...real, default: { ...real, [name]: counting }, [name]: counting };
}
