/**
 * A panel of ours in an editor tab (results, diagram, planning with several models, a job's cockpit): scripts on,
 * kept when hidden (what the person typed survives switching tabs), only `dist/` and `media/` readable, our icon,
 * and the page from its own assets (webviewPage: a fresh nonce and the strict CSP).
 */
import * as vscode from 'vscode';
import { webviewPage } from './webviewPage';

export interface PanelAssets {
  styles: string[];
  script: string;
}

/** The options every panel of ours is opened (or restored after a reload) with. */
export function panelOptions(
  extensionUri: vscode.Uri,
  extra: { enableFindWidget?: boolean } = {},
): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')],
    ...extra,
  };
}

/** A new panel, filled with its page. */
export function openWebviewPanel(
  extensionUri: vscode.Uri,
  panel: {
    viewType: string;
    title: string;
    show: vscode.ViewColumn | { viewColumn: vscode.ViewColumn; preserveFocus?: boolean };
  },
  assets: PanelAssets,
  extra: { enableFindWidget?: boolean } = {},
): vscode.WebviewPanel {
  const created = vscode.window.createWebviewPanel(
    panel.viewType,
    panel.title,
    panel.show,
    panelOptions(extensionUri, extra),
  );
  fillWebviewPanel(extensionUri, created, assets);
  return created;
}

/** Our icon and the page on a panel (a new one, or one VS Code restored after a reload). */
export function fillWebviewPanel(extensionUri: vscode.Uri, panel: vscode.WebviewPanel, assets: PanelAssets): void {
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'database.svg');
  panel.webview.html = webviewPage(panel.webview, extensionUri, assets);
}
