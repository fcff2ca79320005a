/**
 * The review panel's page (no vscode import), served by the host and loaded as is by the first-paint benchmark: a strict CSP
 * (scripts only with the page's nonce), the #app root the webview renders into, and the given assets.
 */
export interface PanelPageAssets {
  /** Where styles, fonts and images may come from (the webview's cspSource). */
  cspSource: string;
  nonce: string;
  /** `<link rel="stylesheet">` or `<style>` elements. */
  styles: string;
  /** `<script nonce>` elements, in order. */
  scripts: string;
  /**
   * No inline styles at all: stylesheets from cspSource and `<style nonce>` only (the schema diagram, which sets
   * no style attribute). The other pages still set a few inline.
   */
  strictStyles?: boolean;
}

export function panelPage({ cspSource, nonce, styles, scripts, strictStyles }: PanelPageAssets): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspSource} ${strictStyles === true ? `'nonce-${nonce}'` : "'unsafe-inline'"}`,
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
