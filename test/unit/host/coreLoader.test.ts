/**
 * The window's one core loader (src/host/lazyServices.ts): activation makes it without loading dist/services.js;
 * the first call requires it, later calls get the same module without requiring it again. A stand-in services.js
 * in a temporary folder counts its own loads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coreOnFirstUse } from '../../../src/host/lazyServices';

const dir = mkdtempSync(join(tmpdir(), 'pgagent-core-loader-'));
const counter = `__pgagentCoreLoads_${process.pid}`;
const loads = () => (globalThis as Record<string, unknown>)[counter] ?? 0;
writeFileSync(
  join(dir, 'services.js'),
  `globalThis.${counter} = (globalThis.${counter} ?? 0) + 1;\nmodule.exports = { marker: 'the core' };\n`,
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('coreOnFirstUse', () => {
  it('loads nothing when made, loads services.js on the first call, and only once', () => {
    const core = coreOnFirstUse(dir);
    expect(loads()).toBe(0);
    const first = core() as unknown as { marker: string };
    expect(first.marker).toBe('the core');
    expect(loads()).toBe(1);
    expect(core()).toBe(first);
    expect(loads()).toBe(1);
  });

  it('a missing bundle is an error at the first use, not when the loader is made', () => {
    const core = coreOnFirstUse(join(dir, 'nowhere'));
    expect(() => core()).toThrow(/services\.js/);
  });
});
