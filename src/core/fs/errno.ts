/** Whether a file-system call failed with this errno code (ENOENT, EEXIST…). */
export function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
