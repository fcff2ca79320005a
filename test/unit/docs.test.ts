/**
 * The README and docs/ as a newcomer reads them: a README of at most 300 lines that links docs/, no reference to
 * design notes outside the repository or to issue numbers, every relative link pointing at a file that exists,
 * every `pg-agent` command shown existing with the flags shown (its own `--help`), and the configuration page
 * listing every setting package.json declares, with its default and where it may be set.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS, runCli } from '../../src/cli/run';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((p) =>
  p.endsWith('.md'),
);
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** The code of a page: its fenced blocks' lines and its inline `code` spans (prose mentions are not commands). */
function codeOf(page: string): string[] {
  const code: string[] = [];
  let fenced = false;
  for (const line of text(page).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (fenced) code.push(line);
    else for (const m of line.matchAll(/`([^`]+)`/g)) code.push(m[1] ?? '');
  }
  return code;
}

describe('README and docs/', () => {
  it('the README is a short path (at most 300 lines) that links the docs index', () => {
    const readme = text('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toContain('](docs/README.md)');
    expect(readme).toContain('## Your own database in five minutes');
  });

  it('cites no design notes outside the repository and no issue numbers', () => {
    for (const page of pages) {
      const body = text(page);
      expect(body, page).not.toMatch(/SPEC\s*§/);
      expect(body, page).not.toMatch(/\bissue\s+#?\d+/i);
      expect(body, page).not.toMatch(/\.\.\/shared\//);
    }
  });

  it('every relative link points at a file of the repository', () => {
    const missing: string[] = [];
    for (const page of pages) {
      for (const m of text(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (m[1] ?? '').split('#')[0] ?? '';
        if (target === '' || /^[a-z]+:/.test(target)) continue;
        const path = join(dirname(page), target);
        if (existsSync(join(ROOT, path))) continue;
        missing.push(`${page} → ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('docs/README.md links every page of docs/', () => {
    const index = text('docs/README.md');
    for (const page of pages.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md'))
      expect(index, page).toContain(`](${page.slice('docs/'.length)})`);
  });

  it('every pg-agent command shown exists, with every flag shown in its --help', async () => {
    const helps = new Map<string, string>();
    const problems: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const line of codeOf(page)) {
        for (const m of line.matchAll(/pg-agent ([a-z][a-z-]*)([^`#|\n]*)/g)) {
          const name = m[1] ?? '';
          if (!COMMANDS.some((c) => c.name === name)) {
            problems.push(`${page}: pg-agent ${name} is no command`);
            continue;
          }
          let help = helps.get(name);
          if (help === undefined) {
            let out = '';
            const code = await runCli([name, '--help'], {
              stdout: (t) => (out += t),
              stderr: (t) => (out += t),
              readStdin: () => Promise.resolve(''),
              isTTY: false,
              env: {},
              cwd: ROOT,
            });
            expect(code, name).toBe(0);
            help = out;
            helps.set(name, help);
          }
          // Flags before any quoted text or `--` (the SQL after it is text, not flags).
          const args = (m[2] ?? '').replace(/"[^"]*"|'[^']*'/g, '').split(/\s--(\s|$)/)[0] ?? '';
          for (const flag of args.match(/(?<![\w-])--[a-z][a-z-]*/g) ?? []) {
            checked++;
            if (!new RegExp(`${flag}(?![a-z-])`).test(help)) problems.push(`${page}: pg-agent ${name} ${flag}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('docs/configuration.md lists every setting package.json declares, with its default and where it is set', () => {
    const pkg = JSON.parse(text('package.json')) as {
      contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string }> } };
    };
    const doc = text('docs/configuration.md');
    const rows = new Map(
      [...doc.matchAll(/^\| `(postgresAgent\.[\w.]+)` \| `([^`]*)` \| ([^|]+) \|/gm)].map((m) => [
        m[1] ?? '',
        { value: m[2] ?? '', where: (m[3] ?? '').trim() },
      ]),
    );
    const declared = Object.entries(pkg.contributes.configuration.properties);
    expect([...rows.keys()].sort()).toEqual(declared.map(([k]) => k).sort());
    for (const [key, spec] of declared) {
      expect(rows.get(key)?.value, key).toBe(JSON.stringify(spec.default));
      expect(rows.get(key)?.where, key).toBe(spec.scope === 'application' ? 'user settings only' : 'user or workspace');
    }
    // Every setting named anywhere in the docs is a real one.
    for (const page of pages)
      for (const m of text(page).matchAll(/postgresAgent\.([a-z][\w]*(?:\.[a-z][\w]*)*)/gi)) {
        const name = `postgresAgent.${m[1] ?? ''}`;
        const known = declared.some(([k]) => k.startsWith(name));
        const commandOrView = /^postgresAgent\.(runSqlWithReview|showReviewPanel|reviewPanel)/.test(name);
        if (!known && !commandOrView && !name.endsWith('.')) expect.soft(`${page}: ${name}`).toBe('a declared setting');
      }
  });

  it('the settings that decide who approves are not offered in workspace settings', () => {
    const pkg = JSON.parse(text('package.json')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    for (const key of ['postgresAgent.approval.autoApproveMaxRisk', 'postgresAgent.redisUrl']) {
      expect(pkg.contributes.configuration.properties[key]?.scope, key).toBe('application');
    }
  });
});
