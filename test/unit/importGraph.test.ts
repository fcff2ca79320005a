/**
 * The layers of SPEC §3 and the rooms of ARCHITECTURE.md, held by the import graph itself (issue 23): no
 * cycle between files (type-only imports count: they make a change in one file re-check the other) and no
 * arrow from a lower layer or room to a higher one. KNOWN lists what is not fixed yet, each with why; an
 * entry that no longer happens fails too, so the list can only shrink.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ImportGraph } from '../support/importGraph';
import { cyclesOf, readImportGraph, specifiersOf } from '../support/importGraph';

const ROOT = resolve(__dirname, '../..');

/**
 * Rooms of src/core from the bottom up: a file may import its own room, lower rooms, src/shared and
 * packages.
 */
const CORE_RANK: Record<string, number> = {
  fs: 0,
  platform: 0,
  db: 1,
  llm: 1,
  diagram: 1,
  config: 2,
  approvals: 3,
  sql: 4,
  dba: 5,
  ask: 5,
  diff: 5,
  jobs: 6,
  review: 7,
  collab: 7,
  present: 8,
  settings: 8,
};

/** Arrows not fixed yet, `from -> to`, each with the reason it stays for now (none left). */
const KNOWN_ARROWS: Record<string, string> = {};

/**
 * `pg-agent` is the process's entry point (SPEC §6): `pg-agent mcp` and `pg-agent guard` start those adapters, so
 * their one command file each may import that adapter (and nothing else of the CLI may); the adapters never
 * import the CLI back.
 */
const STARTS_ADAPTER: Record<string, 'mcp' | 'guard'> = {
  'src/cli/commands/mcpCommand.ts': 'mcp',
  'src/cli/commands/guardCommand.ts': 'guard',
  // The guard command's operation flags (--metrics, --log-format), split from it by size.
  'src/cli/commands/guardOperate.ts': 'guard',
};

/** Circles between the rooms of each folder, as `folder: room, room, …`. */
function roomCycles(graph: ImportGraph): string[] {
  const folders = new Set<string>();
  for (const file of graph.keys()) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length - 1; i++) folders.add(parts.slice(0, i + 1).join('/'));
  }
  const found: string[] = [];
  for (const folder of folders) {
    const roomOf = (file: string) =>
      file.startsWith(`${folder}/`) ? file.slice(folder.length + 1).split('/')[0] : undefined;
    const rooms: ImportGraph = new Map();
    for (const [from, imports] of graph) {
      const a = roomOf(from);
      if (a === undefined) continue;
      for (const { file } of imports) {
        const b = roomOf(file);
        if (b !== undefined && b !== a) rooms.set(a, [...(rooms.get(a) ?? []), { file: b, specifier: b }]);
      }
    }
    for (const cycle of cyclesOf(rooms)) found.push(`${folder}: ${[...cycle].sort().join(', ')}`);
  }
  return found.sort();
}

/** Cycles not broken yet (none: the reach walk's parts meet through sql/reach/walkPort.ts). */
const KNOWN_CYCLES: string[][] = [];

type Place = {
  layer: 'shared' | 'webview' | 'core' | 'host' | 'cli' | 'mcp' | 'guard' | 'extension' | 'vscode' | 'package';
  room?: string;
};

function placeOf(file: string): Place {
  if (file === 'vscode') return { layer: 'vscode' };
  if (file === 'src/extension.ts') return { layer: 'extension' };
  if (file.startsWith('webview/')) return { layer: 'webview' };
  const parts = file.split('/');
  if (parts[0] !== 'src') return { layer: 'package' };
  if (parts[1] === 'core') return { layer: 'core', room: parts[2] };
  if (parts[1] === 'shared' || parts[1] === 'host' || parts[1] === 'cli' || parts[1] === 'mcp' || parts[1] === 'guard')
    return { layer: parts[1] };
  return { layer: 'package' };
}

/** Why an arrow breaks the layers or the rooms, or undefined when it may exist. */
export function arrowViolation(from: string, to: string): string | undefined {
  const a = placeOf(from);
  const b = placeOf(to);
  if (b.layer === 'package') return undefined;
  const ours = b.layer !== 'vscode';
  switch (a.layer) {
    case 'shared':
      return ours && b.layer !== 'shared'
        ? 'src/shared imports nothing of ours'
        : b.layer === 'vscode'
          ? 'src/shared never imports vscode'
          : undefined;
    case 'webview':
      return b.layer !== 'webview' && b.layer !== 'shared' ? 'webview imports only src/shared' : undefined;
    case 'core': {
      if (b.layer === 'shared') return undefined;
      if (b.layer !== 'core') return `src/core never imports ${b.layer === 'vscode' ? 'vscode' : `src/${b.layer}`}`;
      const rankA = CORE_RANK[a.room!];
      const rankB = CORE_RANK[b.room!];
      if (rankA === undefined || rankB === undefined)
        return `core room ${rankA === undefined ? a.room : b.room} has no rank in CORE_RANK`;
      return rankB > rankA
        ? `core/${a.room} (rank ${rankA}) imports core/${b.room} (rank ${rankB}), a higher room`
        : undefined;
    }
    case 'cli':
      if ((b.layer === 'mcp' || b.layer === 'guard') && STARTS_ADAPTER[from] === b.layer) return undefined;
      return b.layer === 'host' ||
        b.layer === 'mcp' ||
        b.layer === 'guard' ||
        b.layer === 'extension' ||
        b.layer === 'webview' ||
        b.layer === 'vscode'
        ? `src/cli never imports ${b.layer}`
        : undefined;
    case 'mcp':
      return b.layer === 'host' ||
        b.layer === 'cli' ||
        b.layer === 'extension' ||
        b.layer === 'webview' ||
        b.layer === 'vscode'
        ? `src/mcp never imports ${b.layer}`
        : undefined;
    case 'guard':
      return b.layer === 'host' ||
        b.layer === 'cli' ||
        b.layer === 'mcp' ||
        b.layer === 'extension' ||
        b.layer === 'webview' ||
        b.layer === 'vscode'
        ? `src/guard never imports ${b.layer}`
        : undefined;
    case 'host':
      return b.layer === 'cli' || b.layer === 'guard' || b.layer === 'extension' || b.layer === 'webview'
        ? `src/host never imports ${b.layer}`
        : undefined;
    default:
      return undefined;
  }
}

function violations(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, imports] of graph) {
    for (const { file: to } of imports) {
      const why = arrowViolation(from, to);
      if (why) found.push(`${from} -> ${to}: ${why}`);
    }
  }
  return [...new Set(found)].sort();
}

describe('the import graph of src/ and webview/', () => {
  const graph = readImportGraph(ROOT, ['src', 'webview']);

  it('reads the whole tree, type-only imports included', () => {
    expect(graph.size).toBeGreaterThan(300);
    const jobRunner = graph.get('src/core/jobs/jobRunnerDeps.ts')!.map((i) => i.file);
    // A type-only import (`import type { JobStore }`) is an arrow like any other.
    expect(jobRunner).toContain('src/core/jobs/jobStore.ts');
  });

  it('has no cycle between files but the known ones', () => {
    expect(cyclesOf(graph).sort((x, y) => x[0]!.localeCompare(y[0]!))).toEqual(KNOWN_CYCLES);
  });

  it('has no arrow against the layers or the core rooms but the known ones', () => {
    const found = violations(graph);
    const unknown = found.filter((v) => !(v.split(': ')[0]! in KNOWN_ARROWS));
    expect(unknown).toEqual([]);
    const stillThere = Object.keys(KNOWN_ARROWS).filter((arrow) => found.some((v) => v.startsWith(`${arrow}: `)));
    expect(stillThere).toEqual(Object.keys(KNOWN_ARROWS));
  });

  it('has no arrow between two rooms of src/core of one rank', () => {
    const arrows = new Set<string>();
    for (const [from, imports] of graph) {
      for (const { file: to } of imports) {
        const a = placeOf(from);
        const b = placeOf(to);
        if (a.layer === 'core' && b.layer === 'core' && a.room !== b.room && CORE_RANK[a.room!] === CORE_RANK[b.room!])
          arrows.add(`${a.room} -> ${b.room}`);
      }
    }
    expect([...arrows].sort()).toEqual([]);
  });

  it('has no circle between the rooms inside a folder (its files and sub-folders)', () => {
    expect(roomCycles(graph)).toEqual([]);
  });

  it('ranks every room and loose file of src/core', () => {
    const rooms = new Set([...graph.keys()].filter((f) => f.startsWith('src/core/')).map((f) => placeOf(f).room!));
    expect([...rooms].filter((room) => CORE_RANK[room] === undefined)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('sees every kind of import, type-only and re-exports included', () => {
    const text = [
      "import type { A } from './a';",
      "import { B } from './b';",
      "export { C } from './c';",
      "export type { D } from './d';",
      "export * from './e';",
      "import f = require('./f');",
      "const g = () => import('./g');",
    ].join('\n');
    expect(specifiersOf('x.ts', text)).toEqual(['./a', './b', './c', './d', './e', './f', './g']);
  });

  it('finds a cycle, a type-only one too', () => {
    const graph: ImportGraph = new Map([
      ['src/core/a.ts', [{ file: 'src/core/b.ts', specifier: './b' }]],
      ['src/core/b.ts', [{ file: 'src/core/c.ts', specifier: './c' }]],
      ['src/core/c.ts', [{ file: 'src/core/a.ts', specifier: './a' }]],
      ['src/core/d.ts', [{ file: 'src/core/a.ts', specifier: './a' }]],
    ]);
    expect(cyclesOf(graph)).toEqual([['src/core/a.ts', 'src/core/b.ts', 'src/core/c.ts']]);
  });

  it('refuses arrows up the layers and up the core rooms', () => {
    expect(arrowViolation('src/mcp/tools/impact.ts', 'src/cli/format.ts')).toMatch(/src\/mcp never imports cli/);
    expect(arrowViolation('src/cli/commands/mcpCommand.ts', 'src/mcp/server.ts')).toBeUndefined();
    expect(arrowViolation('src/cli/commands/sqlCommand.ts', 'src/mcp/server.ts')).toMatch(/src\/cli never imports mcp/);
    expect(arrowViolation('src/cli/commands/mcpCommand.ts', 'src/guard/guardServer.ts')).toMatch(
      /src\/cli never imports guard/,
    );
    expect(arrowViolation('src/guard/clientSession.ts', 'src/cli/sqlInput.ts')).toMatch(/src\/guard never imports cli/);
    expect(arrowViolation('src/guard/clientSession.ts', 'src/mcp/toolContext.ts')).toMatch(
      /src\/guard never imports mcp/,
    );
    expect(arrowViolation('src/guard/clientSession.ts', 'src/core/sql/reach/checkSql.ts')).toBeUndefined();
    expect(arrowViolation('src/core/sql/runSql.ts', 'vscode')).toMatch(/never imports vscode/);
    expect(arrowViolation('src/core/db/introspect.ts', 'src/core/sql/parse.ts')).toMatch(/higher room/);
    expect(arrowViolation('src/core/jobs/jobRunner.ts', 'src/core/review/reviewChat.ts')).toMatch(/higher room/);
    expect(arrowViolation('src/shared/protocol.ts', 'src/core/platform/errors.ts')).toMatch(/imports nothing of ours/);
    expect(arrowViolation('webview/panel/main.ts', 'src/core/platform/errors.ts')).toMatch(/only src\/shared/);
    expect(arrowViolation('src/core/sql/runSql.ts', 'src/core/approvals/ticket.ts')).toBeUndefined();
    expect(arrowViolation('src/host/services.ts', 'src/core/jobs/jobRunner.ts')).toBeUndefined();
  });
});
