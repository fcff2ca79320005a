/**
 * The README's "Your own database in five minutes", played line by line against a real server, as a newcomer
 * would: `npm install -g .` from the clone (into a prefix of the test's own, through npm's own
 * `npm_config_prefix`, so the machine's global folder is untouched), `pg-agent` from that PATH, the README's
 * `DATABASE_URL` and profile pointed at a scratch database holding the shop schema, every command of the
 * section's shell blocks as printed, and every next step the commands print (`approve: …`, `run: …`, `way back: …`)
 * run exactly as printed. The data must end where it started: held, approved, run, undone.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { SHOP_DATA_FINGERPRINT, SHOP_SCHEMA } from '../../support/shopSchema';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Block {
  lang: string;
  text: string;
  /** The prose just before the block. */
  before: string;
}

/** The fenced blocks of one README section, in order. */
export function sectionBlocks(markdown: string, heading: string): Block[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const rest = markdown.slice(start + 1);
  const end = rest.indexOf('\n## ', 3);
  const section = end < 0 ? rest : rest.slice(0, end);
  const blocks: Block[] = [];
  const fence = /```(\w*)\n([\s\S]*?)```/g;
  let last = 0;
  for (const m of section.matchAll(fence)) {
    blocks.push({ lang: m[1] ?? '', text: m[2] ?? '', before: section.slice(last, m.index) });
    last = (m.index ?? 0) + m[0].length;
  }
  return blocks;
}

interface Run {
  line: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

function bash(line: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    // A command that never ends fails with its own line (not the whole test's time-out).
    const stuck = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('close', () => clearTimeout(stuck));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ line, code, stdout, stderr }));
  });
}

/** The next steps a command printed: "  approve: pg-agent …", "  run:     pg-agent …", "  way back: pg-agent …". */
export function printedSteps(stdout: string): { what: string; command: string }[] {
  return [...stdout.matchAll(/^ {2}([a-z ]+):\s+(pg-agent .+)$/gm)].map((m) => ({
    what: m[1] ?? '',
    command: (m[2] ?? '').trim(),
  }));
}

describe.runIf(postgresAvailable)('README: your own database in five minutes', () => {
  let scratch: ScratchDatabase;
  const home = mkdtempSync(join(tmpdir(), 'pgagent-readme-'));
  const prefix = join(home, 'npm-prefix');
  const project = join(home, 'project');
  const runs: Run[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_readme');
    await execSql(scratch.url, SHOP_SCHEMA);
    mkdirSync(project, { recursive: true });
  });

  afterAll(async () => {
    await scratch?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  it('every command of the section, and every step they print, runs as printed', { timeout: 240_000 }, async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const blocks = sectionBlocks(readme, 'Your own database in five minutes');
    const url = new URL(scratch.url);
    // The README says to replace its example database with yours: the same replacement, nothing else.
    const yours = (text: string) =>
      text
        .replaceAll('postgres://me@localhost:5432/shop', scratch.url)
        .replaceAll('"host": "localhost"', `"host": "${url.hostname}"`)
        .replaceAll('"port": 5432', `"port": ${Number(url.port || 5432)}`)
        .replaceAll('"database": "shop"', `"database": "${url.pathname.slice(1)}"`)
        .replaceAll('"user": "me"', `"user": "${decodeURIComponent(url.username) || 'postgres'}"`);
    const env: Record<string, string> = {
      PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      USER: 'newcomer',
      // npm's own setting for where `npm install -g` goes: the README's command, unchanged, into this test's folder.
      npm_config_prefix: prefix,
      npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? home, '.npm'),
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      npm_config_update_notifier: 'false',
    };
    const fingerprint = await queryValue(scratch.url, SHOP_DATA_FINGERPRINT);
    const play = async (line: string, cwd: string): Promise<Run> => {
      const run = await bash(line, cwd, env);
      runs.push(run);
      return run;
    };

    let ranSteps = 0;
    let held = 0;
    for (const block of blocks) {
      if (block.lang === 'json') {
        // "keep a profile in .pgagent/config.json in your project folder"
        expect(block.before).toContain('.pgagent/config.json');
        mkdirSync(join(project, '.pgagent'), { recursive: true });
        writeFileSync(join(project, '.pgagent', 'config.json'), yours(block.text));
        continue;
      }
      if (block.lang !== 'bash') continue;
      for (const raw of block.text.split('\n')) {
        const line = yours(raw.replace(/\s+#.*$/, '').trim());
        if (line === '' || line.startsWith('#')) continue;
        const exported = /^export (\w+)="?([^"]*)"?$/.exec(line);
        if (exported) {
          env[exported[1] ?? ''] = exported[2] ?? '';
          continue;
        }
        // `npm install -g .` runs "from the clone"; everything else in the project folder.
        const run = await play(line, line.startsWith('npm ') ? ROOT : project);
        if (/ --no-input /.test(line)) {
          expect(run.code, `${line}\n${run.stdout}${run.stderr}`).toBe(3);
          held++;
        } else {
          expect(run.code, `${line}\n${run.stdout}${run.stderr}`).toBe(0);
        }
        // Then what it printed to do next, exactly as printed, and what those print in turn.
        // The way back is taken once: the undo's own run prints a way back too (the undo of the undo).
        const queue = printedSteps(run.stdout);
        let wayBack = 0;
        while (queue.length > 0) {
          const step = queue.shift();
          if (!step || (step.what === 'way back' && wayBack++ > 0)) continue;
          const next = await play(step.command, project);
          ranSteps++;
          expect([0, 3], `${step.command}\n${next.stdout}${next.stderr}`).toContain(next.code);
          queue.push(...printedSteps(next.stdout));
        }
      }
    }

    const lines = runs.map((r) => r.line);
    expect(lines).toContain('npm install -g .');
    expect(lines).toContain('pg-agent connect');
    expect(lines.some((l) => l.startsWith('pg-agent sql --connection shop'))).toBe(true);
    expect(held).toBe(1);
    // approve + run of the write, its way back, approve + run of the undo.
    expect(ranSteps).toBeGreaterThanOrEqual(5);
    expect(lines.some((l) => /^pg-agent exec --ticket tkt_\w+$/.test(l))).toBe(true);
    expect(lines.some((l) => /^pg-agent undo tkt_\w+$/.test(l))).toBe(true);
    // Held, approved, run, undone: the data is where it started (the audit log keeps what happened).
    expect(await queryValue(scratch.url, SHOP_DATA_FINGERPRINT)).toBe(fingerprint);
  });
});
