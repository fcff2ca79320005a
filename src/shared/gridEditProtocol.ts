/**
 * Editing rows in the results grid (its own protocol beside resultsProtocol.ts): the page sends the person's
 * edits by row index into the rows the host holds (the host keeps the values as read, never the page's copy);
 * the host answers with where the edit stands. Values a person types are PostgreSQL's text input form; NULL is
 * its own value, so the text "NULL" stays text.
 */
import { z } from 'zod';

/** A value a person typed: PostgreSQL's input text of the column's type, or SQL NULL. */
export const CELL_INPUT = z.union([z.strictObject({ null: z.literal(true) }), z.strictObject({ text: z.string() })]);
export type CellInput = z.infer<typeof CELL_INPUT>;

const rowIndex = z.number().int().min(0).max(10_000_000);
const columnIndex = z.number().int().min(0).max(1600);
const cells = z.array(z.strictObject({ column: columnIndex, value: CELL_INPUT })).max(1600);

export const GRID_EDIT = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('update'), row: rowIndex, cells: cells.min(1) }),
  z.strictObject({ kind: z.literal('delete'), row: rowIndex }),
  /** Columns not given take their default. */
  z.strictObject({ kind: z.literal('insert'), cells }),
]);
export type GridEdit = z.infer<typeof GRID_EDIT>;

const tabId = z.string().regex(/^r\d{1,9}$/);

export const GRID_EDIT_WEBVIEW_MESSAGE = z.discriminatedUnion('type', [
  /** "Edit": may this tab's rows be edited? */
  z.strictObject({ type: z.literal('startEdit'), tab: tabId }),
  /** "Review changes": the edits become one held write at the inline approval. */
  z.strictObject({ type: z.literal('reviewEdits'), tab: tabId, edits: z.array(GRID_EDIT).min(1).max(10_000) }),
]);
export type GridEditWebviewMessage = z.infer<typeof GRID_EDIT_WEBVIEW_MESSAGE>;

/** Where an edit of a tab stands, pushed by the host. */
export type GridEditState =
  /** Editable: which result columns map to the table's columns (null: an expression, not editable). */
  | { phase: 'editing'; table: string; columns: (string | null)[]; primaryKey: string[] }
  | { phase: 'refused'; reason: string }
  /** Held at the inline approval; `conflicts` says when the preview changes fewer rows than were edited. */
  | { phase: 'held'; ticketId: string; sql: string; conflicts: string | null }
  | { phase: 'done'; message: string }
  | { phase: 'failed'; message: string };

export type GridEditHostMessage = { type: 'editState'; tab: string; state: GridEditState };
