/**
 * Markdown written by the model (plan.md, workspace.md, chat replies) to DOM: `marked` turns it into
 * HTML, DOMPurify removes anything active, and the result is a DocumentFragment, never an HTML string
 * assigned to the page. Neither library evaluates code, so the panel's CSP (no unsafe-eval) holds.
 * The two are most of a view's script (80 KB): the cockpit loads this module as a chunk of its own
 * after its first paint (webview/cockpit/markdownChunk.ts); markdown.ts draws until it is there.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: false, async: false });

// Only links a browser would open outside the panel; relative ones would navigate the webview itself.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A') return;
  const href = node.getAttribute('href') ?? '';
  if (!/^(https?:|mailto:)/i.test(href)) node.removeAttribute('href');
  else node.setAttribute('title', href);
  node.removeAttribute('target');
});

const PURIFY = {
  RETURN_DOM_FRAGMENT: true as const,
  // Remote images are blocked by the CSP anyway; forms and styles have no place in a plan.
  FORBID_TAGS: ['img', 'style', 'form', 'button', 'textarea', 'select', 'iframe', 'svg', 'math'],
  FORBID_ATTR: ['style', 'id', 'class'],
};

export function renderMarkdown(markdown: string): DocumentFragment {
  const html = marked.parse(markdown, { async: false });
  return DOMPurify.sanitize(html, PURIFY);
}
