/**
 * The review panel's page (no vscode import), served by the host and loaded as is by the first-paint benchmark: a strict CSP
 * (scripts, and any <style> element, only with the page's nonce; no inline style attributes), the #app root the webview renders into, and the given assets.
 */
export interface PanelPageAssets {
  /** Where styles, fonts and images may come from (the webview's cspSource). */
  cspSource: string;
  nonce: string;
  /** `<link rel="stylesheet">` elements, or `<style nonce>` ones. */
  styles: string;
  /** `<script nonce>` elements, in order. */
  scripts: string;
}

export function panelPage({ cspSource, nonce, styles, scripts }: PanelPageAssets): string {
  const csp = [
    "default-src 'none'",
    // Styles from the extension's files, or a <style> with the page's nonce; never inline (style="…" in markup is
    // refused; a script may still set element.style, which is no markup).
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  ${styles}
  <title>Postgres Agent</title>
</head>
<body>
  <main id="app" aria-live="polite"><p class="muted">Loading…</p></main>
  ${scripts}
</body>
</html>`;
}
