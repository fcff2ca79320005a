/**
 * Loads the markdown renderer (marked + DOMPurify, 80 KB: more than the rest of the cockpit) as a script
 * of its own once the cockpit has drawn its first screen, under the page's CSP: the same nonce as the
 * cockpit's script, from beside it (dist/). Until it is there, markdown shows as plain text.
 */
import type { MarkdownRenderer } from '../common/markdown';
import { useMarkdownRenderer } from '../common/markdown';

/** The global the chunk calls with the renderer. */
export const MARKDOWN_HOOK = 'pgAgentUseMarkdown';
const CHUNK = 'cockpitMarkdown.js';

/** The cockpit's own script element: read while it runs (document.currentScript is null afterwards). */
const self = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null;

export function loadMarkdownRenderer(): void {
  if (!self?.src) return;
  Reflect.set(window, MARKDOWN_HOOK, (render: MarkdownRenderer) => useMarkdownRenderer(render));
  const script = document.createElement('script');
  script.nonce = self.nonce ?? '';
  script.src = new URL(CHUNK, self.src).href;
  // Should it not load, plans and replies stay readable as plain text; the page says why for a bug report.
  script.addEventListener('error', () =>
    document.documentElement.setAttribute('data-markdown', `${CHUNK} did not load`),
  );
  document.head.append(script);
}
