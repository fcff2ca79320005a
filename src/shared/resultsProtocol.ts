/**
 * The results view's one protocol (an editor-area webview panel with a tab per result): the host pushes
 * the tab list and only the active tab's rows (rows are never sent twice); the webview sends intents,
 * each parsed here before the host acts on it (a webview is untrusted input).
 */
import { z } from 'zod';
import type { ResultsView } from './protocol';

export interface ResultTabInfo {
  id: string;
  title: string;
}

export type ResultsHostMessage = {
  type: 'results';
  version: number;
  tabs: ResultTabInfo[];
  active: string | null;
  result: ResultsView | null;
};

const tabId = z.string().regex(/^r\d{1,9}$/);
const index = z.number().int().min(0).max(10_000_000);

export const RESULTS_WEBVIEW_MESSAGE = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('selectTab'), id: tabId }),
  z.strictObject({ type: z.literal('closeTab'), id: tabId }),
  z.strictObject({ type: z.literal('export'), format: z.enum(['csv', 'json']) }),
  /** `row` is the row's index in the result as the host sent it (not in the sorted view). */
  z.strictObject({ type: z.literal('copy'), what: z.enum(['cell', 'row', 'column']), row: index, column: index }),
]);

export type ResultsWebviewMessage = z.infer<typeof RESULTS_WEBVIEW_MESSAGE>;
