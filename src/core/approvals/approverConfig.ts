/** Adds an approver (name, public key, roles) to `.pgagent/config.json`, keeping everything else in it. */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentError } from '../errors';
import type { WorkspacePaths } from '../workspace';
import { readWorkspaceConfig } from '../workspace';
import type { Approver } from './approvalPolicy';

/** Refuses, before any key is made, a config that cannot take this approver (broken file, name taken). */
export async function checkNewApprover(paths: WorkspacePaths, name: string): Promise<void> {
  const config = await readWorkspaceConfig(paths);
  if (config.approval?.approvers?.some((a) => a.name === name)) {
    throw new AgentError('BAD_INPUT', `${paths.config} already lists an approver named "${name}".`, 'Pick another --name, or remove the old entry if that key is gone.');
  }
}

export async function addApprover(paths: WorkspacePaths, approver: Approver): Promise<void> {
  // Validates the file as it is first: a broken config is reported, never overwritten.
  await readWorkspaceConfig(paths);
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(await readFile(paths.config, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error;
  }
  const approval = (typeof json.approval === 'object' && json.approval !== null ? json.approval : {}) as Record<string, unknown>;
  const approvers = Array.isArray(approval.approvers) ? (approval.approvers as Approver[]) : [];
  const same = approvers.find((a) => a.name === approver.name);
  if (same) {
    throw new AgentError(
      'BAD_INPUT',
      `${paths.config} already lists an approver named "${approver.name}".`,
      same.publicKey === approver.publicKey ? 'It is this key; nothing to add.' : 'Pick another --name, or remove the old entry if that key is gone.',
    );
  }
  const next = { ...json, approval: { ...approval, approvers: [...approvers, approver] } };
  await mkdir(dirname(paths.config), { recursive: true });
  await writeFile(`${paths.config}.tmp`, `${JSON.stringify(next, null, 2)}\n`);
  await rename(`${paths.config}.tmp`, paths.config);
}
