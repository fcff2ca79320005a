/**
 * The schema diagram's one protocol (an editor-area webview panel): the graph it draws as plain data (built
 * by core/db/schemaGraph.ts from the schema cache), what the host pushes, and the intents the page sends back,
 * each parsed here before the host acts on it (a webview is untrusted input).
 */
import { z } from 'zod';
import type { DiagramLayout } from './diagramGeometry';

/** At most this many tables are laid out at once: more would not lay out quickly (said on screen). */
export const DIAGRAM_TABLE_LIMIT = 120;
/** At most this many columns of a table are drawn; the rest are counted. */
export const DIAGRAM_COLUMN_LIMIT = 24;

export interface DiagramColumn {
  name: string;
  type: string;
  /** Part of the primary key. */
  pk: boolean;
  /** Part of a foreign key. */
  fk: boolean;
  nullable: boolean;
}

export interface DiagramTable {
  /** `schema.name`, unquoted (ids only; never SQL). */
  id: string;
  schema: string;
  name: string;
  kind: 'table' | 'partitioned_table' | 'view' | 'materialized_view' | 'foreign_table';
  columns: DiagramColumn[];
  /** Columns not drawn (beyond DIAGRAM_COLUMN_LIMIT). */
  moreColumns: number;
  /** The table the neighbourhood is of. */
  focus: boolean;
}

export interface DiagramEdge {
  id: string;
  /** The referencing table's id. */
  from: string;
  /** The referenced table's id. */
  to: string;
  name: string;
  columns: string[];
  references: string[];
  onDelete: string;
}

export type DiagramScope =
  { kind: 'schema'; schema: string } | { kind: 'neighbourhood'; schema: string; table: string; depth: 1 | 2 };

export interface DiagramGraph {
  scope: DiagramScope;
  tables: DiagramTable[];
  edges: DiagramEdge[];
  /** Tables the scope holds (drawn or not). */
  inScope: number;
  /** What the view draws and why, said on screen ("the 120 most connected of 2,000 tables …"). */
  note: string;
}

export type DiagramHostMessage =
  /**
   * The graph to draw; with its ELK layout when the host has it already (cached), else the page places the tables
   * provisionally at once and the layout follows in a 'layout' message of the same version.
   */
  | {
      type: 'graph';
      version: number;
      graph: DiagramGraph;
      database: string;
      schemas: string[];
      layout?: DiagramLayout;
    }
  | { type: 'layout'; version: number; layout: DiagramLayout }
  | { type: 'error'; version: number; message: string }
  /** Answer to a search: tables of the whole database whose name holds the text (a few dozen at most). */
  | { type: 'searchResults'; query: string; tables: { schema: string; name: string }[] };

const name = z.string().min(1).max(255);

export const DIAGRAM_WEBVIEW_MESSAGE = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('openSchema'), schema: name }),
  z.strictObject({
    type: z.literal('openNeighbourhood'),
    schema: name,
    table: name,
    depth: z.union([z.literal(1), z.literal(2)]),
  }),
  z.strictObject({ type: z.literal('search'), query: z.string().max(255) }),
  /** A click on a table: reveal it in the Schema tree and show its first 100 rows. */
  z.strictObject({ type: z.literal('openTable'), schema: name, table: name }),
  /** An export drawn by the page: SVG text, or a PNG as a data URL. */
  z.strictObject({
    type: z.literal('export'),
    format: z.enum(['svg', 'png']),
    data: z.string().max(64 * 1024 * 1024),
  }),
]);

export type DiagramWebviewMessage = z.infer<typeof DIAGRAM_WEBVIEW_MESSAGE>;
