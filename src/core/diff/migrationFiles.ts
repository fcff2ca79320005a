/**
 * A schema diff written as migration files for the workspace's own tool, picked from what it uses (package.json
 * dependencies, then folders): Prisma (prisma/migrations/<ts>_<name>/migration.sql), node-pg-migrate and knex
 * (JavaScript migrations running the SQL, `noTransaction` / `config.transaction = false` for statements
 * PostgreSQL runs only outside one), or plain SQL files. One file (or folder) per phase: the change in one
 * transaction, then the validations, then each statement that must run alone.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileWhole } from '../fs/atomicWrite';
import { AgentError } from '../platform/errors';
import type { DiffStatement } from './schemaDiff';

export const MIGRATION_TOOLS = ['sql', 'node-pg-migrate', 'knex', 'prisma'] as const;
export type MigrationTool = (typeof MIGRATION_TOOLS)[number];

/** The tool the workspace uses: its package.json's dependencies first, then the folders it keeps. */
export async function detectMigrationTool(workspaceDir: string): Promise<MigrationTool> {
  const pkg = await readFile(join(workspaceDir, 'package.json'), 'utf8').then(
    (text) => JSON.parse(text) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> },
    () => undefined,
  );
  const deps = { ...pkg?.dependencies, ...pkg?.devDependencies };
  if ('prisma' in deps || '@prisma/client' in deps) return 'prisma';
  if ('node-pg-migrate' in deps) return 'node-pg-migrate';
  if ('knex' in deps) return 'knex';
  if (existsSync(join(workspaceDir, 'prisma', 'migrations'))) return 'prisma';
  return 'sql';
}

export interface MigrationFile {
  path: string;
  phase: DiffStatement['phase'];
  statements: number;
}

interface Step {
  phase: DiffStatement['phase'];
  statements: string[];
  transactional: boolean;
}

/** The steps of a diff: the change, the validations, then each concurrent statement alone. */
export function migrationSteps(statements: readonly DiffStatement[]): Step[] {
  const of = (phase: DiffStatement['phase']) => statements.filter((s) => s.phase === phase).map((s) => s.sql);
  return [
    { phase: 'change' as const, statements: of('change'), transactional: true },
    { phase: 'validate' as const, statements: of('validate'), transactional: true },
    ...of('concurrent').map((sql) => ({ phase: 'concurrent' as const, statements: [sql], transactional: false })),
  ].filter((s) => s.statements.length > 0);
}

/**
 * Writes the steps into `dir` for `tool`, named `<timestamp>_<name>` with one second between steps so the tool
 * runs them in order. Never replaces a file (createFileWhole): a name taken is an error, nothing half-written.
 */
export async function writeMigration(
  dir: string,
  tool: MigrationTool,
  statements: readonly DiffStatement[],
  options: { name: string; header: string; now?: Date },
): Promise<MigrationFile[]> {
  await mkdir(dir, { recursive: true });
  // After every migration already there (the tool runs them by name), and never on a name that is taken.
  const base = Math.max((options.now ?? new Date()).getTime(), (await latestStamp(dir)) + 1000);
  const files: MigrationFile[] = [];
  for (const [i, step] of migrationSteps(statements).entries()) {
    const stamp = new Date(base + i * 1000).toISOString().replace(/\D/g, '').slice(0, 14);
    const name = `${stamp}_${options.name}${step.phase === 'change' ? '' : `_${step.phase}`}`;
    const body = step.statements.map((s) => `${s};`).join('\n\n');
    const header = `${options.header}\n-- Step ${i + 1} (${step.phase}): ${step.transactional ? 'one transaction' : 'outside a transaction (PostgreSQL runs it only alone)'}.\n`;
    let path: string;
    let text: string;
    switch (tool) {
      case 'prisma':
        await mkdir(join(dir, name), { recursive: true });
        path = join(dir, name, 'migration.sql');
        text = `${header}\n${body}\n`;
        break;
      case 'sql':
        path = join(dir, `${name}.sql`);
        text = `${header}\n${step.transactional ? `BEGIN;\n\n${body}\n\nCOMMIT;` : body}\n`;
        break;
      case 'node-pg-migrate':
        path = join(dir, `${name}.js`);
        text =
          `${jsComment(header)}\n` +
          `exports.up = (pgm) => {\n${step.transactional ? '' : '  pgm.noTransaction();\n'}` +
          step.statements.map((s) => `  pgm.sql(${JSON.stringify(s)});\n`).join('') +
          `};\n\nexports.down = false;\n`;
        break;
      case 'knex':
        path = join(dir, `${name}.js`);
        text =
          `${jsComment(header)}\n` +
          `exports.up = async (knex) => {\n` +
          step.statements.map((s) => `  await knex.raw(${JSON.stringify(s)});\n`).join('') +
          `};\n\nexports.down = async () => {\n  throw new Error('Written by pg-agent diff: run the diff the other way for the way back.');\n};\n` +
          (step.transactional ? '' : `\nexports.config = { transaction: false };\n`);
        break;
    }
    if (!(await createFileWhole(path, text)))
      throw new AgentError(
        'BAD_INPUT',
        `${path} exists already: nothing was replaced.`,
        'Pick another --write-migration folder.',
      );
    files.push({ path, phase: step.phase, statements: step.statements.length });
  }
  return files;
}

/** The time of the newest `<yyyymmddhhmmss>_…` entry of `dir` (UTC, as written), or 0. */
async function latestStamp(dir: string): Promise<number> {
  let latest = 0;
  for (const name of await readdir(dir)) {
    const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})_/.exec(name);
    if (m) latest = Math.max(latest, Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  }
  return latest;
}

function jsComment(header: string): string {
  return header.replace(/^-- /gm, '// ').replace(/^--$/gm, '//');
}
