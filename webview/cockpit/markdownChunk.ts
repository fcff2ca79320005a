/**
 * The cockpit's second script (dist/cockpitMarkdown.js): marked + DOMPurify, loaded after the first paint
 * and handed to the cockpit through the hook it set (webview/cockpit/lazyMarkdown.ts).
 */
import { renderMarkdown } from '../common/markdownRenderer';
import { MARKDOWN_HOOK } from './lazyMarkdown';

const hook: unknown = Reflect.get(window, MARKDOWN_HOOK);
if (typeof hook === 'function') (hook as (render: typeof renderMarkdown) => void)(renderMarkdown);
