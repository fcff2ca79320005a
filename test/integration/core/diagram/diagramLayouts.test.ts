/**
 * The schema diagram's layouts as the extension host computes them: the built worker (dist/diagramLayoutWorker.js)
 * running ELK off the host's thread, every table placed without overlap, each layout remembered per schema and graph
 * hash (a second ask answers from the cache, even with the worker gone), and a worker that cannot start failing clearly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { schemaGraph } from '../../../../src/core/db/schemaGraph';
import { DiagramLayouts } from '../../../../src/core/diagram/diagramLayouts';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { bigSnapshot, domainTables } from '../../../fixtures/bigSchema';

const WORKER = path.resolve('dist', 'diagramLayoutWorker.js');
const shop: SchemaSnapshot = { database: 'shop', serverVersion: '16', tables: domainTables() };
const engines: DiagramLayouts[] = [];

beforeAll(() => {
  if (!fs.existsSync(WORKER)) throw new Error(`${WORKER} is missing: run \`npm run build\` first (npm test does).`);
});

afterEach(() => {
  for (const e of engines.splice(0)) e.dispose();
});

function engine(script = WORKER): DiagramLayouts {
  const e = new DiagramLayouts(script);
  engines.push(e);
  return e;
}

describe('DiagramLayouts (ELK in a worker thread)', () => {
  it('lays out every table of the 120 drawn of 2,000 without overlap, with a route per edge', async () => {
    const g = schemaGraph(bigSnapshot(), 'public');
    const layout = await engine().layout(g);
    expect(layout.tables.map((t) => t.id).sort()).toEqual(g.tables.map((t) => t.id).sort());
    const boxes = layout.tables;
    boxes.forEach((a, i) => {
      for (const b of boxes.slice(i + 1))
        expect(a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height).toBe(false);
    });
    expect(layout.edges).toHaveLength(g.edges.length);
    expect(layout.edges.every((e) => e.points.length >= 2)).toBe(true);
  });

  it('remembers a layout per schema and hash: asked again it is the same, even with the worker gone', async () => {
    const layouts = engine();
    const g = schemaGraph(shop, 'public');
    expect(layouts.cached(g)).toBeUndefined();
    const [first, concurrent] = await Promise.all([layouts.layout(g), layouts.layout(schemaGraph(shop, 'public'))]);
    expect(concurrent).toBe(first);
    layouts.dispose();
    expect(layouts.cached(schemaGraph(shop, 'public'))).toBe(first);
    expect(await layouts.layout(g)).toBe(first);
  });

  it('fails with a clear error when its worker cannot start, and the next ask tries again', async () => {
    const broken = engine(path.resolve('dist', 'no-such-worker.js'));
    await expect(broken.layout(schemaGraph(shop, 'public'))).rejects.toThrow(/Cannot find module|no-such-worker/);
  });
});
