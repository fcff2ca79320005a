/**
 * How the History view draws its nodes: a database (its statement count), and a statement (its SQL's first line;
 * when, how long, how many rows, from where, and a write's ticket). Texts from the history are shown with their
 * hidden characters made visible, never rendered.
 */
import * as vscode from 'vscode';
import type { HistoryEntry } from '../../core/sql/history/historyEntry';
import type { DatabaseHistory } from '../../core/sql/history/historyTail';
import { visibleText } from '../../shared/visibleSql';

export type HistoryNode =
  | { kind: 'database'; database: DatabaseHistory; expanded: boolean }
  /** `id`: unique in the tree (two identical statements in one millisecond, e.g. a guard client's, get #2). */
  | { kind: 'statement'; entry: HistoryEntry; id: string };

/** Context values the view's menus match (package.json view/item/context). */
export const STATEMENT_CONTEXT = { read: 'historyRead', write: 'historyWrite', cut: 'historyCut' } as const;

const LABEL_CHARS = 100;

export function historyTreeItem(node: HistoryNode, now: Date = new Date()): vscode.TreeItem {
  if (node.kind === 'database') {
    const { database } = node;
    const item = new vscode.TreeItem(
      visibleText(database.db),
      node.expanded ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = `db:${database.db}`;
    const count = database.entries.length;
    item.description = `${count.toLocaleString('en-US')}${database.more ? '+' : ''} ${count === 1 && !database.more ? 'statement' : 'statements'}`;
    item.iconPath = new vscode.ThemeIcon('database');
    item.contextValue = 'historyDatabase';
    return item;
  }
  const { entry } = node;
  const item = new vscode.TreeItem(firstLine(entry.sql), vscode.TreeItemCollapsibleState.None);
  item.id = node.id;
  item.description = statementFacts(entry, now);
  item.iconPath =
    entry.status === 'error'
      ? new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'))
      : new vscode.ThemeIcon(entry.kind === 'write' ? 'edit' : 'search');
  item.tooltip = statementTooltip(entry);
  item.contextValue =
    entry.sqlTruncated === true ? STATEMENT_CONTEXT.cut : STATEMENT_CONTEXT[entry.kind === 'write' ? 'write' : 'read'];
  item.accessibilityInformation = { label: `${entry.kind} ${firstLine(entry.sql)}, ${item.description}` };
  return item;
}

/** The statements of a database as nodes, each with an id that stays the same across refreshes. */
export function statementNodes(entries: readonly HistoryEntry[]): HistoryNode[] {
  const seen = new Map<string, number>();
  return entries.map((entry) => {
    const key = `stmt:${entry.db}:${entry.at}:${entry.origin}:${entry.ticket ?? ''}:${entry.sql.length}:${entry.sql.slice(0, 200)}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return { kind: 'statement', entry, id: n === 1 ? key : `${key}#${n}` };
  });
}

/** The SQL's first non-empty line, cut to a label's length ("…" when there is more). */
export function firstLine(sql: string): string {
  const lines = sql
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const first = lines[0] ?? '';
  const cut = first.length > LABEL_CHARS ? `${first.slice(0, LABEL_CHARS)}…` : lines.length > 1 ? `${first} …` : first;
  return visibleText(cut);
}

/** "14:03:22 · 3.2 ms · 3 rows · vscode · tkt_…" (the date too when not today). */
export function statementFacts(entry: HistoryEntry, now: Date = new Date()): string {
  const facts = [when(entry.at, now)];
  if (entry.repeats) facts.push(`${entry.repeats.toLocaleString('en-US')} runs of this shape`);
  if (entry.ms !== null) facts.push(`${entry.ms} ms`);
  if (entry.status === 'error') facts.push('failed');
  else if (entry.rows !== null)
    facts.push(`${entry.rows.toLocaleString('en-US')} ${entry.rows === 1 ? 'row' : 'rows'}`);
  facts.push(entry.origin);
  if (entry.ticket) facts.push(entry.ticket);
  return facts.join(' · ');
}

function when(at: string, now: Date): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return visibleText(at);
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return date.toDateString() === now.toDateString()
    ? time
    : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
}

function statementTooltip(entry: HistoryEntry): vscode.MarkdownString {
  const tip = new vscode.MarkdownString();
  tip.appendCodeblock(visibleText(entry.sql), 'sql');
  if (entry.sqlTruncated === true)
    tip.appendText('(cut: longer than the history keeps; it cannot run again from here)\n\n');
  tip.appendText(
    `${entry.kind} on ${visibleText(entry.db)} by ${visibleText(entry.who)} (${entry.origin}), ${entry.at}\n` +
      (entry.ticket ? `ticket ${entry.ticket}\n` : '') +
      (entry.status === 'error' ? `failed: ${visibleText(entry.error ?? '')}\n` : ''),
  );
  tip.appendText(
    entry.kind === 'write'
      ? '\nRun Again holds it on a new ticket for your approval.'
      : '\nRun Again runs it read-only into the results grid.',
  );
  return tip;
}
