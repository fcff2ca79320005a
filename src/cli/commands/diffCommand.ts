/**
 * `pg-agent diff --from A --to B`: the DDL that turns A's schema into B's, to run on A. Without
 * --write-migration its next step is held as one ticket on A with its DDL analysis (locks, rewrites, lint, the
 * safer equivalent), exit 3; with it, every step is written as migration files for the workspace's tool.
 * `--snapshot FILE` writes A's structure to FILE instead, for a later diff against a database.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { migrationSteps, MIGRATION_TOOLS, detectMigrationTool, writeMigration } from '../../core/diff/migrationFiles';
import type { MigrationTool } from '../../core/diff/migrationFiles';
import { diffSchemas } from '../../core/diff/schemaDiff';
import { AgentError } from '../../core/platform/errors';
import { renderImpact } from '../../core/present/renderImpact';
import { ticketSummary } from '../../core/present/outputJson';
import { runSql } from '../../core/sql/runSql';
import { saveImpactReport } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/config/workspace';
import { visibleText } from '../../shared/visibleSql';
import type { CliCommand } from '../command';
import { requesterOf } from '../decider';
import type { DiffSource } from '../diff/diffSource';
import { openDiffSource } from '../diff/diffSource';
import { EXIT } from '../exitCodes';
import { cliPolicy, withPolicyWarnings } from '../sqlInput';

export const diffCommand: CliCommand = {
  name: 'diff',
  summary:
    "the DDL that turns A's schema into B's (to run on A), analysed and held as a ticket or written as a migration",
  usage:
    'pg-agent diff --from A --to B [--write-migration DIR [--tool sql|node-pg-migrate|knex|prisma]] [--json]\n' +
    '       pg-agent diff --from A --snapshot FILE',
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    'write-migration': { type: 'string' },
    tool: { type: 'string' },
    snapshot: { type: 'string' },
  },
  optionsHelp: `  --from A            the database the DDL runs on: URL, libpq string, "sample", a connection profile's name,
                      or a snapshot file (then only --write-migration or the DDL itself)
  --to B              the schema to reach: the same kinds
  --write-migration D write every step as migration files in folder D instead of holding a ticket
  --tool T            the migration tool (default: what the workspace's package.json uses, else plain SQL)
  --snapshot FILE     write A's structure to FILE (JSON) for a later --from/--to`,
  description:
    'Steps: the change (one transaction; constraints on existing tables NOT VALID), then validations (one transaction),\n' +
    'then each CREATE INDEX CONCURRENTLY alone. A ticket holds the next step; once it ran, run the same diff for the next.',
  async run(context) {
    const { args, io } = context;
    const text = (name: string): string | undefined => {
      const value = args.options[name];
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || value.length === 0)
        throw new AgentError('BAD_INPUT', `--${name} takes a value.`);
      return value;
    };
    const from = text('from');
    const to = text('to');
    const snapshotFile = text('snapshot');
    const migrationDir = text('write-migration');
    const toolFlag = text('tool');
    if (!from) throw new AgentError('BAD_INPUT', 'diff needs --from A.', 'pg-agent diff --from A --to B');
    if (!to && !snapshotFile)
      throw new AgentError(
        'BAD_INPUT',
        'diff needs --to B (or --snapshot FILE to save A).',
        'pg-agent diff --from A --to B',
      );
    if (toolFlag !== undefined && !MIGRATION_TOOLS.includes(toolFlag as MigrationTool))
      throw new AgentError('BAD_INPUT', `--tool takes ${MIGRATION_TOOLS.join(', ')}; not "${toolFlag}".`);
    const sources: DiffSource[] = [];
    try {
      const a = await openDiffSource(context, from);
      sources.push(a);
      if (snapshotFile) {
        await writeFile(snapshotFile, `${JSON.stringify(a.snapshot, null, 1)}\n`, { flag: 'wx' }).catch(
          (error: unknown) => {
            throw new AgentError(
              'BAD_INPUT',
              `Cannot write ${snapshotFile}: ${String(error)}`,
              'Pick a file that does not exist yet.',
            );
          },
        );
        io.stdout(
          args.flags.json
            ? `${JSON.stringify({ status: 'snapshot', file: resolve(snapshotFile) })}\n`
            : `Wrote the schema of ${from} to ${snapshotFile}.\n`,
        );
        return EXIT.ok;
      }
      const b = await openDiffSource(context, to ?? '');
      sources.push(b);
      const diff = diffSchemas(a.snapshot, b.snapshot);
      const steps = migrationSteps(diff.statements);
      const base = { statements: diff.statements, notes: diff.notes };
      if (steps.length === 0) {
        io.stdout(
          args.flags.json
            ? `${JSON.stringify({ status: 'equal', ...base })}\n`
            : `No difference: ${from} already has the schema of ${to}.\n`,
        );
        for (const note of diff.notes) if (!args.flags.json) io.stdout(`Note: ${note}\n`);
        return EXIT.ok;
      }
      if (migrationDir) {
        const tool = (toolFlag as MigrationTool | undefined) ?? (await detectMigrationTool(args.flags.workspace));
        const files = await writeMigration(migrationDir, tool, diff.statements, {
          name: 'schema_diff',
          header: `-- Written by pg-agent diff --from ${a.kind === 'file' ? a.path : a.label} --to ${b.kind === 'file' ? b.path : b.label}.\n-- Review it before it runs; pg-agent sql or the guard shows each statement's locks.`,
        });
        if (args.flags.json) io.stdout(`${JSON.stringify({ status: 'written', tool, files, ...base })}\n`);
        else {
          io.stdout(`Wrote ${files.length} ${tool} migration file${files.length === 1 ? '' : 's'}:\n`);
          for (const f of files)
            io.stdout(`  ${f.path}  (${f.phase}, ${f.statements} statement${f.statements === 1 ? '' : 's'})\n`);
          for (const note of diff.notes) io.stdout(`Note: ${note}\n`);
        }
        return EXIT.ok;
      }
      if (a.kind !== 'database')
        throw new AgentError(
          'BAD_INPUT',
          'A ticket runs on a database: --from is a snapshot file.',
          'Give --from a database, or --write-migration DIR.',
        );
      const [step, ...later] = steps;
      if (!step) return EXIT.ok;
      const { settings, warnings } = await cliPolicy(context);
      const store = await context.openTicketStore();
      const outcome = await runSql(a.db, store, {
        sql: step.statements.map((s) => `${s};`).join('\n'),
        connection: a.connection,
        requestedBy: await requesterOf(context),
        settings,
      });
      if (outcome.status === 'refused') {
        io.stderr(`Refused: ${visibleText(outcome.classification.reasons.join('; '))}.\n`);
        return EXIT.refused;
      }
      if (outcome.status === 'executed') throw new Error('A schema change ran as a read.');
      if (outcome.status === 'held')
        await saveImpactReport(workspacePaths(args.flags.workspace).impact, outcome.ticket);
      const next = later.map((s) => ({ phase: s.phase, statements: s.statements }));
      if (args.flags.json) {
        io.stdout(
          `${JSON.stringify({ status: outcome.status, step: step.phase, ticket: ticketSummary(outcome.ticket), impact: withPolicyWarnings(outcome.impact, warnings), next, ...base })}\n`,
        );
      } else {
        io.stdout(`Step 1 of ${steps.length} (${step.phase}) on ${a.label}:\n\n`);
        io.stdout(
          `${visibleText(step.statements.map((s) => `${s};`).join('\n'))}\n\n${renderImpact(outcome.impact)}\n\n`,
        );
        io.stdout(
          `Held as ticket ${outcome.ticket.id}. Approve it (pg-agent approvals approve ${outcome.ticket.id}), run it (pg-agent exec --ticket ${outcome.ticket.id}),\nthen run this diff again${later.length > 0 ? ` for the next step (${later.map((s) => s.phase).join(', ')})` : ' to check nothing is left'}.\n`,
        );
        for (const note of diff.notes) io.stdout(`Note: ${note}\n`);
      }
      return outcome.status === 'held' ? EXIT.held : EXIT.ok;
    } finally {
      for (const s of sources) if (s.kind === 'database') await s.db.close().catch(() => undefined);
    }
  },
};
