/** A webview's page from its own assets: a fresh nonce, every asset through asWebviewUri, panelPage's CSP. */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { panelPage } from './panelPage';

export function webviewPage(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  assets: { styles: string[]; script: string },
): string {
  const nonce = randomBytes(16).toString('base64');
  const asset = (path: string) =>
    webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...path.split('/'))).toString();
  return panelPage({
    cspSource: webview.cspSource,
    nonce,
    styles: assets.styles.map((css) => `<link rel="stylesheet" href="${asset(css)}">`).join(''),
    scripts: `<script nonce="${nonce}" src="${asset(assets.script)}"></script>`,
  });
}
