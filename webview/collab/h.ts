/** DOM helpers of the session view: elements from data, text always set as text (never parsed as HTML). */

export function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string | null)[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children.filter((c): c is Node | string => c !== null));
  return node;
}

export function action(label: string, testId: string, onClick: () => void, options: { secondary?: boolean; disabled?: boolean } = {}): HTMLElement {
  const b = h('vscode-button', { 'data-testid': testId, ...(options.secondary ? { secondary: '' } : {}), ...(options.disabled ? { disabled: '' } : {}) }, label);
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

export function list(items: readonly string[], attrs: Record<string, string> = {}): HTMLElement {
  return h('ul', attrs, ...items.map((i) => h('li', {}, i)));
}

export function pct(n: number): string {
  return `${Math.round(n * 100)} %`;
}

export function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

export function usd(n: number | null): string {
  return n === null ? 'cost unknown' : `$${n.toFixed(4)}`;
}
