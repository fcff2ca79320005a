// Schema diagram first paint (issue 33: p95 < 500 ms for a 100-table schema): the production diagram bundle in
// headless Chromium, in the page the host serves (its strict CSP: no inline style), with the graph of a schema
// pushed on 'ready'; "rendered" is the first table box drawn after ELK's layout, "complete" every box and edge.
// Floors in the same run: the same page with a 10-table schema, and the graph built in Node (core/db/schemaGraph).
// The 2,000-table schema (test/fixtures/bigSchema.ts) is drawn as the view draws it: its 120 most connected tables.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { schemaGraph } from '../src/core/db/schemaGraph';
import type { DiagramHostMessage } from '../src/shared/diagramProtocol';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../src/shared/schema';
import { bigSnapshot } from '../test/fixtures/bigSchema';
import { percentile, report } from './stats';
import { bundleWebview, launchBenchBrowser, measurePaint, reportTimings } from './webviewPaint';

/** `count` tables in schema `app`, 6-14 columns each, each referencing one or two earlier tables. */
function appSchema(count: number): SchemaSnapshot {
  const tables: TableInfo[] = [];
  for (let i = 0; i < count; i++) {
    const columns: ColumnInfo[] = [{ name: 'id', type: 'bigint', nullable: false, default: null, comment: null }];
    const refs = i === 0 ? [] : i % 3 === 0 ? [Math.floor(i / 2), i - 1] : [Math.floor((i * 7) % i)];
    for (const r of refs)
      columns.push({ name: `entity_${r}_id`, type: 'bigint', nullable: true, default: null, comment: null });
    for (let c = columns.length; c < 6 + (i % 9); c++)
      columns.push({
        name: `attribute_${c}`,
        type: c % 3 === 0 ? 'timestamp with time zone' : c % 3 === 1 ? 'text' : 'numeric(12,2)',
        nullable: c % 2 === 0,
        default: null,
        comment: null,
      });
    tables.push({
      schema: 'app',
      name: `entity_${i}`,
      kind: 'table',
      comment: null,
      rowEstimate: 1000,
      columns,
      primaryKey: ['id'],
      uniqueConstraints: [],
      foreignKeys: refs.map((r) => ({
        name: `entity_${i}_entity_${r}_fkey`,
        columns: [`entity_${r}_id`],
        references: { schema: 'app', table: `entity_${r}`, columns: ['id'] },
        onDelete: 'NO ACTION',
        onUpdate: 'NO ACTION',
      })),
      indexes: [],
      triggers: [],
    });
  }
  return { database: 'bench', serverVersion: '16', tables };
}

function message(snapshot: SchemaSnapshot, schema: string): DiagramHostMessage {
  return {
    type: 'graph',
    version: 1,
    graph: schemaGraph(snapshot, schema),
    database: snapshot.database,
    schemas: [schema],
  };
}

async function main(): Promise<void> {
  const bundle = bundleWebview('webview/diagram/main.ts');
  const css = readFileSync(join('media', 'diagram.css'), 'utf8');
  report('diagram bundle (minified IIFE with elkjs)', `${(Buffer.byteLength(bundle) / 1024).toFixed(1)} KB`);

  const hundred = appSchema(100);
  const big = bigSnapshot();
  const builds: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    schemaGraph(big, 'public');
    builds.push(performance.now() - started);
  }
  report(
    'graph of the 2,000-table schema built in Node (120 most connected), p50 / p95',
    `${percentile(builds, 50).toFixed(2)} / ${percentile(builds, 95).toFixed(2)} ms`,
  );

  const scenarios = [
    { key: 'diagram10', label: 'diagram, 10-table schema (floor)', message: message(appSchema(10), 'app') },
    { key: 'diagram100', label: 'diagram, 100-table schema', message: message(hundred, 'app') },
    { key: 'diagramBig', label: 'diagram, 2,000-table schema (120 drawn)', message: message(big, 'public') },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-diagram-bench-'));
  const browser = await launchBenchBrowser();
  try {
    const consoleLines = new Set<string>();
    for (const scenario of scenarios) {
      const timings = await measurePaint(
        browser,
        dir,
        {
          ...scenario,
          expect: ['[data-testid="diagram-table"]', '[data-testid="diagram-edge"]'],
          css,
          bundle: [{ name: `${scenario.key}.js`, js: bundle }],
          viewport: { width: 1280, height: 900 },
        },
        consoleLines,
      );
      reportTimings(scenario.label, timings);
    }
    report(
      'diagram console errors / warnings (CSP included)',
      consoleLines.size === 0 ? 'none' : [...consoleLines].join(' | '),
    );
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
