/** The one DOM helper of every page: elements from data, with text set as text (never parsed as HTML). */
import type { PanelCommand } from '../../src/shared/panelMessages';
import { post } from './vscodeApi';

/** An element with its attributes and children (`null` children are left out). */
export function el(
  tag: string,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null)[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    // The pages' CSP refuses style attributes (no 'unsafe-inline'); the CSSOM is not markup and is allowed.
    if (name === 'style') node.style.cssText = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c): c is Node | string => c !== null));
  return node;
}

export function button(
  label: string,
  testId: string,
  onClick: () => void,
  secondary = false,
  extra: Record<string, string> = {},
): HTMLElement {
  const b = el('vscode-button', { 'data-testid': testId, ...(secondary ? { secondary: '' } : {}), ...extra }, label);
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

export function commandButton(label: string, command: PanelCommand, secondary = false, testId?: string): HTMLElement {
  const b = el(
    'vscode-button',
    { ...(secondary ? { secondary: '' } : {}), ...(testId ? { 'data-testid': testId } : {}) },
    label,
  );
  b.addEventListener('click', () => post({ type: 'runCommand', command }));
  return b;
}

export function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

export function plural(n: number, word: string): string {
  return `${fmt(n)} ${word}${n === 1 ? '' : 's'}`;
}

export function list(items: readonly string[], attrs: Record<string, string> = {}): HTMLElement {
  return el('ul', attrs, ...items.map((i) => el('li', {}, i)));
}

export function pct(n: number): string {
  return `${Math.round(n * 100)} %`;
}

export function usd(n: number | null): string {
  return n === null ? 'cost unknown' : `$${n.toFixed(4)}`;
}
