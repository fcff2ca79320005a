// Themes in the E2E: the four theme families a person may use (light, dark, high contrast dark and light),
// switching to one through the workspace's settings, and the measured contrast of a webview's text (WCAG AA).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { expect } from 'vitest';
import { screenshot } from './workbench';

const UI_TIMEOUT_MS = 30_000;

/** The themes as the picker names them and as settings name them, the workbench's classes, and the webviews' body classes. */
export const THEMES = [
  { name: 'Light Modern', setting: 'Default Light Modern', workbench: 'vs', webview: 'vscode-light' },
  {
    name: 'Dark High Contrast',
    setting: 'Default High Contrast',
    workbench: 'hc-black',
    webview: 'vscode-high-contrast',
  },
  {
    name: 'Light High Contrast',
    setting: 'Default High Contrast Light',
    workbench: 'hc-light',
    webview: 'vscode-high-contrast-light',
  },
  { name: 'Dark Modern', setting: 'Default Dark Modern', workbench: 'vs-dark', webview: 'vscode-dark' },
] as const;

export type Theme = (typeof THEMES)[number];

/** WCAG AA for normal text. */
export const MIN_CONTRAST = 4.5;

/**
 * Switches the colour theme through the workspace's settings (`workbench.colorTheme` in
 * .vscode/settings.json, which VS Code watches), as a person's settings sync or a teammate's shared
 * settings do, and waits for the workbench and each of `frames` (found again after the switch) to wear it.
 * No keyboard is involved: the theme picker needs the palette, which a webview holding the keyboard can
 * swallow.
 */
export async function useTheme(
  p: Page,
  workspace: string,
  theme: Theme,
  frames: (() => Promise<Frame>)[],
): Promise<void> {
  const file = join(workspace, '.vscode', 'settings.json');
  const settings = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...settings, 'workbench.colorTheme': theme.setting }, null, 2)}\n`);
  await p.locator(`.monaco-workbench.${theme.workbench}`).waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
  for (const frameOf of frames) {
    const frame = await frameOf();
    await expect
      .poll(() => frame.evaluate(() => document.body.className), { timeout: UI_TIMEOUT_MS })
      .toContain(theme.webview);
  }
}

/**
 * The contrast of each visible text matched by `selectors` against the colour behind it: the element's
 * own and its ancestors' backgrounds composited (alpha included) over the side bar's background.
 */
export async function contrasts(
  frame: Frame,
  selectors: readonly string[],
): Promise<{ selector: string; text: string; ratio: number }[]> {
  return frame.evaluate((list) => {
    const probe = document.createElement('span');
    document.body.append(probe);
    /** Any CSS colour as [r, g, b, a] in 0..1, by letting the browser compute it. */
    const rgba = (css: string): number[] => {
      probe.style.color = '';
      probe.style.color = css;
      const m = /rgba?\(([^)]+)\)/.exec(getComputedStyle(probe).color);
      const [r = 0, g = 0, b = 0, a = 1] = (m?.[1] ?? '0, 0, 0')
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return [r / 255, g / 255, b / 255, a];
    };
    const over = (top: number[], bottom: number[]): number[] => {
      const a = top[3] ?? 1;
      return [0, 1, 2].map((i) => (top[i] ?? 0) * a + (bottom[i] ?? 0) * (1 - a)).concat(1);
    };
    const luminance = (c: number[]): number => {
      const [r = 0, g = 0, b = 0] = c.map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const root = getComputedStyle(document.documentElement);
    const base = rgba(
      root.getPropertyValue('--vscode-sideBar-background').trim() ||
        root.getPropertyValue('--vscode-editor-background').trim(),
    );
    const results: { selector: string; text: string; ratio: number }[] = [];
    for (const selector of list) {
      for (const element of document.querySelectorAll<HTMLElement>(selector)) {
        if (element.offsetParent === null || (element.innerText ?? '').trim() === '') continue;
        const layers: number[][] = [];
        for (let e: HTMLElement | null = element; e; e = e.parentElement)
          layers.push(rgba(getComputedStyle(e).backgroundColor));
        const background = layers.reduceRight((below, layer) => over(layer, below), base);
        const foreground = over(rgba(getComputedStyle(element).color), background);
        const [hi, lo] = [luminance(foreground), luminance(background)].sort((x, y) => y - x);
        results.push({
          selector,
          text: element.innerText.trim().slice(0, 40),
          ratio: Math.round((((hi ?? 0) + 0.05) / ((lo ?? 0) + 0.05)) * 100) / 100,
        });
      }
    }
    probe.remove();
    return results;
  }, selectors);
}

/** A webview and the texts in it that must stay readable. */
export interface ReadableView {
  frame: () => Promise<Frame>;
  readable: readonly string[];
}

/**
 * In each theme: switches to it, takes a picture (`theme-<workbench class>`) and measures every text of
 * `views`. Each kind of text must be found (a renamed class cannot make this pass by measuring nothing) and
 * reach WCAG AA.
 */
export async function readableInEveryTheme(
  p: Page,
  workspace: string,
  suite: string,
  views: readonly ReadableView[],
): Promise<void> {
  for (const theme of THEMES) {
    await useTheme(
      p,
      workspace,
      theme,
      views.map((v) => v.frame),
    );
    const measured = [];
    for (const view of views) measured.push(...(await contrasts(await view.frame(), view.readable)));
    await screenshot(p, `theme-${theme.workbench}`, suite);
    expect(new Set(measured.map((m) => m.selector)), theme.name).toEqual(new Set(views.flatMap((v) => v.readable)));
    expect(
      measured.filter((m) => m.ratio < MIN_CONTRAST),
      `text under ${MIN_CONTRAST}:1 in ${theme.name}`,
    ).toEqual([]);
  }
}
