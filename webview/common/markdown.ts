/**
 * Blocks of model markdown (plan.md, workspace.md, chat replies), drawn by the renderer once a view has
 * one (markdownRenderer.ts: marked + DOMPurify). A view that loads the renderer later (the cockpit, for a
 * fast first paint) gets the text as plain text first — set as text, never parsed — and each such block
 * is rendered in place when the renderer arrives (its node stays, so memoized sections stay valid).
 */

export type MarkdownRenderer = (markdown: string) => DocumentFragment;

let renderer: MarkdownRenderer | undefined;
const waiting = new Map<HTMLElement, string>();

/** Installs the renderer and renders the blocks drawn as plain text so far. */
export function useMarkdownRenderer(render: MarkdownRenderer): void {
  renderer = render;
  for (const [block, markdown] of waiting) {
    block.classList.remove('markdown-plain');
    block.replaceChildren(render(markdown));
  }
  waiting.clear();
}

/** A container of rendered markdown (class `markdown` for styling). */
export function markdownBlock(markdown: string, attrs: Record<string, string> = {}): HTMLElement {
  const block = document.createElement('div');
  block.className = 'markdown';
  for (const [name, value] of Object.entries(attrs)) block.setAttribute(name, value);
  if (renderer) {
    block.append(renderer(markdown));
  } else {
    block.classList.add('markdown-plain');
    block.textContent = markdown;
    waiting.set(block, markdown);
  }
  return block;
}
