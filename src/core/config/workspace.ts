/**
 * The `.pgagent/` folder of a workspace (SPEC §4): where each piece of state lives, and the non-secret
 * config.json shared between VS Code and the CLI.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import type { ConnectionProfile } from '../db/connectionTarget';
import type { Approver, ApprovalPolicy, ApprovalRules } from '../../shared/approvalRules';
import { isErrno } from '../fs/errno';

export interface WorkspacePaths {
  root: string;
  config: string;
  sampleDb: string;
  checkpoints: string;
  jobs: string;
  approvals: string;
  /** Schema snapshots cached when no Redis is configured. */
  schemaCache: string;
  /** Impact reports of writes run outside a job, by ticket id. */
  impact: string;
  /** Undo scripts of writes run outside a job, by ticket id. */
  undo: string;
  /** Job leases (one driver per job) when no Redis is configured. */
  leases: string;
  /** Ask runs by thread: each one's audit log (and the SQL VS Code opens). */
  runs: string;
  /** Collaborative planning sessions, by session id. */
  collab: string;
  /** Writes outside agents proposed (MCP propose_write), as `<ticket>.sql` files for people. */
  proposals: string;
  /** Query history, one JSON-lines file per database (what ran, where, by whom). */
  history: string;
}

export function workspacePaths(workspaceDir: string): WorkspacePaths {
  const root = join(workspaceDir, '.pgagent');
  return {
    root,
    config: join(root, 'config.json'),
    sampleDb: join(root, 'sample-db'),
    checkpoints: join(root, 'checkpoints'),
    jobs: join(root, 'jobs'),
    approvals: join(root, 'approvals'),
    schemaCache: join(root, 'schema-cache'),
    impact: join(root, 'impact'),
    undo: join(root, 'undo'),
    leases: join(root, 'leases'),
    runs: join(root, 'runs'),
    collab: join(root, 'collab'),
    proposals: join(root, 'proposals'),
    history: join(root, 'history'),
  };
}

const sshHopSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).optional(),
  user: z.string().min(1),
  auth: z.enum(['agent', 'key', 'password']),
  keyFile: z.string().min(1).optional(),
});

export const connectionProfileSchema = z.strictObject({
  name: z.string().min(1),
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).optional(),
  database: z.string().min(1),
  user: z.string().min(1),
  sslmode: z.enum(['disable', 'prefer', 'require', 'verify-ca', 'verify-full']).optional(),
  sslrootcert: z.string().min(1).optional(),
  sslcert: z.string().min(1).optional(),
  sslkey: z.string().min(1).optional(),
  /** An SSH tunnel (issue 27): no secret here; passphrases and passwords are asked or kept in SecretStorage. */
  ssh: sshHopSchema
    .extend({
      jumpHosts: z.array(sshHopSchema).optional(),
      keepAliveSeconds: z.number().int().min(1).max(3600).optional(),
    })
    .strict()
    .optional(),
  /** A cloud IAM login (issue 27): the password is a short-lived token; the SDK is an optional package. */
  iam: z
    .discriminatedUnion('provider', [
      z.strictObject({
        provider: z.literal('aws-rds'),
        region: z.string().min(1),
        awsProfile: z.string().min(1).optional(),
      }),
      z.strictObject({ provider: z.literal('azure'), scope: z.string().min(1).optional() }),
    ])
    .optional(),
});

const riskLevel = z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);
const approvalPolicySchema = z.strictObject({
  requireSignature: z.boolean().optional(),
  twoPersonAbove: z.enum(['none', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']).optional(),
  noSelfApprovalAbove: z.enum(['none', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']).optional(),
  rolesFor: z.partialRecord(riskLevel, z.array(z.string())).optional(),
});

const workspaceConfigSchema = z.object({
  connections: z.array(connectionProfileSchema).default([]),
  /** The CLI's counterpart of the extension's postgresAgent.approval / safety settings. */
  approval: z
    .object({
      autoApproveMaxRisk: z.enum(['none', 'LOW', 'MEDIUM', 'HIGH']).optional(),
      /** Team approvals (SPEC §5.3): named approvers with public keys and roles, and the policy the executor checks. */
      approvers: z
        .array(
          z.strictObject({
            name: z.string().min(1),
            publicKey: z.string().min(1),
            roles: z.array(z.string()).default([]),
          }),
        )
        .optional(),
      policy: approvalPolicySchema.optional(),
      /** approval.policy per connection (ticket connection key or profile name). */
      connections: z.record(z.string(), approvalPolicySchema).optional(),
      /** approval.policy per database identity, "<system_identifier>/<database>" (policyInForce.ts). */
      databases: z
        .record(
          z.string().regex(/^[0-9]+\/.+$/, 'a database identity "<system_identifier>/<database>"'),
          approvalPolicySchema,
        )
        .optional(),
    })
    .optional(),
  safety: z
    .object({
      criticalTables: z.array(z.string()).optional(),
      riskThresholds: z
        .object({
          low: z.number(),
          medium: z.number(),
          high: z.number(),
          smallTableRows: z.number(),
          bigTableRows: z.number(),
        })
        .partial()
        .optional(),
      /** Approved DDL's lock tries (issue 25): the wait of one try, in ms, and how many tries. */
      ddlLockTimeoutMs: z.number().int().min(1).max(60_000).optional(),
      ddlLockAttempts: z.number().int().min(1).max(100).optional(),
      /** Filtered writes that sweep their table (issue 25): the share of rows, and the factor over the estimate. */
      sweepingWrites: z
        .object({ matchesAllShare: z.number().gt(0).max(1), estimateFactor: z.number().min(1) })
        .partial()
        .optional(),
      /** A guard transaction's retry may differ in fresh UUIDs and current timestamps (on by default); false: identical values only. */
      guardVolatileValues: z.boolean().optional(),
      /** The way back from destructive DDL (issue 25); read from the person's own config only (turning it off loosens). */
      recovery: z
        .object({
          enabled: z.boolean(),
          maxCopyBytes: z.number().int().min(0),
          retentionDays: z.number().int().min(0).max(3650),
        })
        .partial()
        .optional(),
    })
    .optional(),
  /** The CLI's counterpart of postgresAgent.planning.* (jobs). */
  planning: z
    .object({ interactive: z.boolean().optional(), maxReviewCycles: z.number().int().min(1).optional() })
    .optional(),
  /** Team mode: job checkpoints in this database (schema pgagent); passwords come from the environment. */
  team: z.object({ databaseUrl: z.string().optional() }).optional(),
});

export interface WorkspaceConfig {
  connections: ConnectionProfile[];
  approval?:
    | {
        autoApproveMaxRisk?: 'none' | 'LOW' | 'MEDIUM' | 'HIGH' | undefined;
        approvers?: Approver[] | undefined;
        policy?: z.infer<typeof approvalPolicySchema> | undefined;
        connections?: Record<string, z.infer<typeof approvalPolicySchema>> | undefined;
        databases?: Record<string, z.infer<typeof approvalPolicySchema>> | undefined;
      }
    | undefined;
  safety?:
    | {
        criticalTables?: string[] | undefined;
        riskThresholds?:
          | {
              low?: number | undefined;
              medium?: number | undefined;
              high?: number | undefined;
              smallTableRows?: number | undefined;
              bigTableRows?: number | undefined;
            }
          | undefined;
        ddlLockTimeoutMs?: number | undefined;
        ddlLockAttempts?: number | undefined;
        sweepingWrites?: { matchesAllShare?: number | undefined; estimateFactor?: number | undefined } | undefined;
        guardVolatileValues?: boolean | undefined;
        recovery?:
          | { enabled?: boolean | undefined; maxCopyBytes?: number | undefined; retentionDays?: number | undefined }
          | undefined;
      }
    | undefined;
  planning?: { interactive?: boolean | undefined; maxReviewCycles?: number | undefined } | undefined;
  team?: { databaseUrl?: string | undefined } | undefined;
}

/** Reads .pgagent/config.json; a missing file is an empty config, a malformed one a clear error. */
export function readWorkspaceConfig(paths: WorkspacePaths): Promise<WorkspaceConfig> {
  return readConfigFile(paths.config);
}

/**
 * Reads a config file of this shape (the workspace's .pgagent/config.json, or the person's own
 * $XDG_CONFIG_HOME/pg-agent/config.json): a missing file is an empty config, a malformed one a clear error.
 */
export async function readConfigFile(file: string): Promise<WorkspaceConfig> {
  const paths = { config: file };
  let text: string;
  try {
    text = await readFile(paths.config, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return { connections: [] };
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError('CONFIG_INVALID', `${paths.config} is not valid JSON.`, 'Fix or delete the file.', {
      cause: error,
    });
  }
  const parsed = workspaceConfigSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    // A bad record key says why through its own issue ("a database identity …"), not zod's "Invalid key in record".
    const message = first?.code === 'invalid_key' ? (first.issues[0]?.message ?? first.message) : first?.message;
    const where = first ? `${first.path.join('.') || '(root)'}: ${message}` : parsed.error.message;
    throw new AgentError(
      'CONFIG_INVALID',
      `${paths.config} is not a valid Postgres Agent config (${where}).`,
      'Passwords never go in this file; each connection needs name, host, database and user.',
    );
  }
  return parsed.data;
}

/** The team-approval part of the config as the executor checks it; undefined when nothing is configured. */
export function approvalRulesOf(config: WorkspaceConfig): ApprovalRules | undefined {
  const approval = config.approval;
  if (!approval || (!approval.approvers?.length && !approval.policy && !approval.connections)) return undefined;
  const strip = (p: z.infer<typeof approvalPolicySchema>): ApprovalPolicy =>
    JSON.parse(JSON.stringify(p)) as ApprovalPolicy;
  return {
    approvers: approval.approvers ?? [],
    policy: approval.policy ? strip(approval.policy) : {},
    ...(approval.connections
      ? { connections: Object.fromEntries(Object.entries(approval.connections).map(([k, v]) => [k, strip(v)])) }
      : {}),
  };
}
