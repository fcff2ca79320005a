/**
 * The composition root (ARCHITECTURE.md, "Ports"): only src/extension.ts and src/host/compose/ hold the window's
 * core loader. A host feature takes a port, an interface of the few functions it uses, so no other file calls
 * `core()` (or `x.core()`), names the `CoreLoader` type or makes one (`coreOnFirstUse`). Read with the TypeScript
 * parser, every file of src/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

/** Where the loader may be held: the composition root, and the file that defines it. */
const COMPOSITION_ROOT = ['src/extension.ts', 'src/host/compose/', 'src/host/lazyServices.ts'];

const LOADER_NAMES = new Set(['CoreLoader', 'coreOnFirstUse']);

/** Each use of the loader in one file: `line: text`. */
export function loaderUses(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node) => `${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name === 'core') found.push(at(node));
    } else if (ts.isIdentifier(node) && LOADER_NAMES.has(node.text)) {
      found.push(at(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')
      ? [relative(ROOT, path).split(sep).join('/')]
      : [];
  });
}

const under = (file: string, places: readonly string[]) => places.some((p) => file === p || file.startsWith(p));

const usesByFile = new Map(
  sourceFiles(join(ROOT, 'src'))
    .map((file) => [file, loaderUses(file, readFileSync(join(ROOT, file), 'utf8'))] as const)
    .filter(([, uses]) => uses.length > 0),
);

describe('the core loader outside the composition root', () => {
  it('is used by no file but the composition root', () => {
    const outside = [...usesByFile].filter(([file]) => !under(file, COMPOSITION_ROOT));
    expect(Object.fromEntries(outside)).toEqual({});
  });

  it('is where the window makes it: src/extension.ts', () => {
    expect(usesByFile.get('src/extension.ts')?.some((use) => use.endsWith(': coreOnFirstUse'))).toBe(true);
  });
});

describe('the check itself', () => {
  it('sees a call of the loader, through a field too, and its type and maker by name', () => {
    const text = [
      "import type { CoreLoader } from '../lazyServices';",
      'class A { constructor(private readonly core: CoreLoader) {} run() { return this.core().runSql(); } }',
      'const b = (deps: { core: () => unknown }) => deps.core();',
      'const c = coreOnFirstUse();',
      'core().toAgentError(1);',
    ].join('\n');
    expect(loaderUses('x.ts', text)).toEqual([
      '1: CoreLoader',
      '2: CoreLoader',
      '2: this.core()',
      '3: deps.core()',
      '4: coreOnFirstUse',
      '5: core()',
    ]);
  });

  it('lets a port through: its functions are named calls, not the loader', () => {
    const text = [
      'interface P { openDatabase(): void; core: string }',
      'const f = (port: P) => { port.openDatabase(); return port.core; };',
      "import { core } from './nowhere'; // a name, never called",
    ].join('\n');
    expect(loaderUses('x.ts', text)).toEqual([]);
  });
});
