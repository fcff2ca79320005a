/** The webview pages' CSP: styles only from the extension's files or a <style> with the page's nonce, never inline. */
import { describe, expect, it } from 'vitest';
import { panelPage } from '../../../src/host/ui/panelPage';

describe("the webview page's content security policy", () => {
  const page = panelPage({ cspSource: 'vscode-resource:', nonce: 'bm9uY2U=', styles: '', scripts: '' });
  const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(page)?.[1] ?? '';
  const directive = (name: string) => csp.split('; ').find((d) => d.startsWith(`${name} `));

  it('allows no inline style and no inline script', () => {
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(directive('style-src')).toBe("style-src vscode-resource: 'nonce-bm9uY2U='");
    expect(directive('script-src')).toBe("script-src 'nonce-bm9uY2U='");
    expect(directive('default-src')).toBe("default-src 'none'");
  });
});
