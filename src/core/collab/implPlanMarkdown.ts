/**
 * IMPL_PLAN.md, rendered in code from the validated plan.json (seed phase 5's structure, for a database):
 * overview, rationale, steps (objective, objects, SQL, verification), object manifest, acceptance
 * criteria, risk mitigation, prerequisites. The same text becomes plan.md of a job made from the session.
 */
import type { PlanJson } from './planSchema';
import type { Solution } from './sessionTypes';

export function implPlanMarkdown(plan: PlanJson, task: string, solution: Solution): string {
  const m = plan._metadata;
  const lines: string[] = [
    `# Implementation Plan: ${plan.title}`,
    '',
    '## Overview',
    `- **Task**: ${oneLine(task)}`,
    `- **Approach**: ${solution.name} (option ${m.option})`,
    `- **Complexity**: ${plan.complexity}`,
    `- **Chosen by**: ${m.chosen_by}, ${m.chosen_at}`,
    `- **Generated**: ${m.generated_at} from session \`${m.session_id}\` (${m.models.join(', ')})`,
    '',
    plan.overview,
    '',
    '## Background & Decision Rationale',
    '',
    plan.rationale,
    '',
    `Trade-offs of the option: effort ${solution.effort}, risk ${solution.risk}, feasibility ${Math.round(solution.feasibility * 100)} % of its SQL verified against the database.`,
    ...(solution.refuted.length > 0
      ? ['', 'Refuted by the database during the discussion:', ...solution.refuted.map((r) => `- ${r}`)]
      : []),
    '',
    '## Implementation Steps',
  ];
  plan.tasks.forEach((task, i) => {
    lines.push(
      '',
      `### Step ${i + 1}: ${task.title} (\`${task.id}\`)`,
      `**Objective**: ${task.description}`,
      '',
      `**Scope**: ${task.scope}`,
      '',
      `**Objects**: ${task.objects.map((o) => `\`${o}\``).join(', ') || 'none'}`,
      '',
      `**Depends on**: ${task.depends_on.join(', ') || 'nothing'} · **Execution group**: ${task.execution_group}`,
    );
    if (task.sql?.trim()) lines.push('', '```sql', task.sql.trim(), '```');
    lines.push('', `**Verification**: ${task.verification}`);
  });
  const manifest = new Map<string, string[]>();
  for (const task of plan.tasks)
    for (const object of task.objects) manifest.set(object, [...(manifest.get(object) ?? []), task.id]);
  lines.push(
    '',
    '## Object Manifest',
    '',
    '| Object | Tasks |',
    '|---|---|',
    ...[...manifest].map(([object, ids]) => `| \`${cell(object)}\` | ${ids.join(', ')} |`),
  );
  lines.push('', '## Acceptance Criteria', '', ...plan.acceptanceCriteria.map((c, i) => `${i + 1}. ${c}`));
  lines.push(
    '',
    '## Risk Mitigation',
    '',
    '| Risk | Mitigation |',
    '|---|---|',
    ...plan.risks.map((r) => `| ${cell(r.risk)} | ${cell(r.mitigation)} |`),
  );
  lines.push(
    '',
    '## Dependencies & Prerequisites',
    '',
    ...(plan.prerequisites.length > 0 ? plan.prerequisites.map((p) => `- ${p}`) : ['- none']),
  );
  lines.push(
    '',
    'Every write of this plan is still held for its own approval ticket with its exact impact when it runs.',
    '',
  );
  return lines.join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function cell(text: string): string {
  return oneLine(text).replace(/\|/g, '\\|');
}
