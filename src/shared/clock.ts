/** "14:02": how times are written on screen (UX.md), for the host's CodeLens and the panel alike. */
export function clock(iso: string | undefined): string {
  const d = iso ? new Date(iso) : new Date();
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}
