/**
 * The import graph of our own source, read with the TypeScript compiler's parser: every `import … from`,
 * `export … from` (type-only included) and `import('…')`, resolved to the file it names. Used by
 * test/unit/importGraph.test.ts to hold the layers of SPEC §3 and the rooms of ARCHITECTURE.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Repository-relative paths with forward slashes: `src/core/sql/parse.ts`. */
export type ImportGraph = Map<string, { file: string; specifier: string }[]>;

function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sourceFiles(root, path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path.split(sep).join('/'));
  }
  return out;
}

/** Module specifiers of one file, as written. */
export function specifiersOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    false,
    fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The file a relative specifier names (`./x` → `x.ts`, `x.tsx` or `x/index.ts`); a package name as itself. */
function resolveSpecifier(root: string, from: string, specifier: string, files: Set<string>): string {
  if (!specifier.startsWith('.')) return specifier;
  const base = relative(root, resolve(root, dirname(from), specifier))
    .split(sep)
    .join('/');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, base.replace(/\.js$/, '.ts'), base]) {
    if (files.has(candidate) || existsSync(join(root, candidate))) return candidate;
  }
  return base;
}

export function readImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const files = dirs.flatMap((dir) => sourceFiles(root, dir));
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    graph.set(
      file,
      specifiersOf(file, text).map((specifier) => ({
        file: resolveSpecifier(root, file, specifier, known),
        specifier,
      })),
    );
  }
  return graph;
}

/** Every cycle between files, as the sorted members of each strongly connected component of 2+ files. */
export function cyclesOf(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const { file: w } of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return found;
}
