/**
 * The schema diagram's geometry, one place for the host (which lays the graph out with ELK) and the page (which
 * draws it, and places it provisionally until that layout arrives): a table box's size from its text in the
 * diagram's monospace font, and the laid-out positions the host sends.
 */
/** What a box's size depends on (a DiagramTable is one). */
export interface SizedTable {
  name: string;
  columns: readonly { name: string; type: string }[];
  moreColumns: number;
}

export const ROW = 18;
export const HEAD = 24;
export const CHAR = 7.2;
const PAD = 10;

export interface Point {
  x: number;
  y: number;
}

/** Where ELK put each table (top-left corner and size) and how each foreign key's arrow runs. */
export interface DiagramLayout {
  tables: { id: string; x: number; y: number; width: number; height: number }[];
  edges: { id: string; points: Point[] }[];
  width: number;
  height: number;
}

/** Rows drawn in a table box: its columns, and a "+N more columns" line when some are left out. */
export function rowsOf(table: SizedTable): number {
  return table.columns.length + (table.moreColumns > 0 ? 1 : 0);
}

export function sizeOf(table: SizedTable): { width: number; height: number } {
  const title = table.name.length + 2;
  const widest = Math.max(title, ...table.columns.map((c) => 4 + c.name.length + 2 + Math.min(c.type.length, 28)));
  return { width: Math.ceil(widest * CHAR + 2 * PAD), height: HEAD + rowsOf(table) * ROW + 6 };
}
