/**
 * What VS Code learns from package.json matches the code: the language-model tools are the MCP tools (names,
 * order, descriptions, input schemas), the MCP provider id is the one registered, and the server launch
 * keeps secrets off the command line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LM_TOOL_NAMES, LM_TOOL_PREFIX, MCP_PROVIDER_ID } from '../../../src/host/agents/lmToolNames';
import { buildMcpLaunch } from '../../../src/host/agents/mcpLaunch';
import { proposalText, sqlOffset } from '../../../src/core/approvals/proposalFiles';
import { MCP_TOOLS } from '../../../src/mcp/toolList';

interface LmToolContribution {
  name: string;
  displayName: string;
  modelDescription: string;
  inputSchema: unknown;
}

const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  contributes: { languageModelTools: LmToolContribution[]; mcpServerDefinitionProviders: { id: string }[] };
  dependencies: Record<string, string>;
};

describe('package.json contributions', () => {
  it('contributes every MCP tool as a language-model tool with the same input schema', () => {
    expect(LM_TOOL_NAMES).toEqual(MCP_TOOLS.map((t) => t.name));
    const contributed = pkg.contributes.languageModelTools;
    expect(contributed.map((t) => t.name)).toEqual(LM_TOOL_NAMES.map((n) => `${LM_TOOL_PREFIX}${n}`));
    for (const [i, tool] of MCP_TOOLS.entries()) {
      const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
      expect(contributed[i]?.inputSchema, tool.name).toEqual(schema);
      expect(contributed[i]?.modelDescription, tool.name).toBe(tool.description);
      expect(contributed[i]?.displayName, tool.name).toBe(tool.title);
    }
  });

  it('declares the MCP server definition provider the extension registers, and pins the SDK', () => {
    expect(pkg.contributes.mcpServerDefinitionProviders.map((p) => p.id)).toEqual([MCP_PROVIDER_ID]);
    expect(pkg.dependencies['@modelcontextprotocol/sdk']).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('buildMcpLaunch', () => {
  const base = {
    extensionPath: '/ext',
    nodePath: '/usr/bin/node',
    electron: false,
    workspaceDir: '/work/shop',
    version: '1.2.3',
  };

  it('runs dist/cli.js mcp on the sample database of the workspace', () => {
    const launch = buildMcpLaunch({ ...base, connection: { kind: 'sample' } });
    expect(launch).toMatchObject({
      command: '/usr/bin/node',
      args: ['/ext/dist/cli.js', 'mcp', '--db', 'sample', '--workspace', '/work/shop'],
      cwd: '/work/shop',
      env: {},
    });
  });

  it('passes a profile as a password-free URL; the password, Redis and Electron flag only in the environment', () => {
    const launch = buildMcpLaunch({
      ...base,
      electron: true,
      redisUrl: 'redis://10.0.0.2:6379',
      maxRows: 50,
      timeoutMs: 2000,
      connection: {
        kind: 'profile',
        profile: {
          name: 'prod',
          host: 'db.internal',
          port: 6432,
          database: 'shop db',
          user: 'ana',
          sslmode: 'require',
        },
        password: 'p@ss w/rd',
      },
    });
    expect(launch.args).toEqual([
      '/ext/dist/cli.js',
      'mcp',
      '--db',
      'postgres://ana@db.internal:6432/shop%20db?sslmode=require',
      '--workspace',
      '/work/shop',
      '--max-rows',
      '50',
      '--timeout-ms',
      '2000',
    ]);
    expect(launch.env).toEqual({
      ELECTRON_RUN_AS_NODE: '1',
      PGPASSWORD: 'p@ss w/rd',
      REDIS_URL: 'redis://10.0.0.2:6379',
    });
    expect(JSON.stringify(launch.args)).not.toContain('p@ss');
    expect(launch.label).toBe('Postgres Agent (prod)');
  });

  it("names a tunnelled or IAM profile instead of a URL (the URL's host:port would be another database from here); TLS files ride in the URL", () => {
    const ssh = { host: 'bastion', user: 'deploy', auth: 'agent' as const };
    const tunnelled = buildMcpLaunch({
      ...base,
      connection: {
        kind: 'profile',
        profile: { name: 'behind', host: '127.0.0.1', database: 'shop', user: 'app', ssh },
      },
    });
    expect(tunnelled.args.slice(1, 4)).toEqual(['mcp', '--connection', 'behind']);
    const iam = buildMcpLaunch({
      ...base,
      connection: {
        kind: 'profile',
        profile: {
          name: 'rds',
          host: 'db',
          database: 'shop',
          user: 'app',
          iam: { provider: 'aws-rds', region: 'eu-west-1' },
        },
      },
    });
    expect(iam.args.slice(1, 4)).toEqual(['mcp', '--connection', 'rds']);
    const tls = buildMcpLaunch({
      ...base,
      connection: {
        kind: 'profile',
        profile: {
          name: 'v',
          host: 'db',
          database: 'shop',
          user: 'app',
          sslmode: 'verify-full',
          sslrootcert: '/ca.crt',
        },
      },
    });
    expect(tls.args[3]).toBe('postgres://app@db:5432/shop?sslmode=verify-full&sslrootcert=%2Fca.crt');
  });

  it('changes its version when the connection changes (VS Code restarts the server)', () => {
    const sample = buildMcpLaunch({ ...base, connection: { kind: 'sample' } });
    const other = buildMcpLaunch({
      ...base,
      connection: { kind: 'profile', profile: { name: 'x', host: 'h', database: 'd', user: 'u' } },
    });
    expect(sample.version).not.toBe(other.version);
  });
});

describe('proposal files', () => {
  it('keep a model-written reason inside its comment line and the ticket SQL findable', () => {
    const sql = "DELETE FROM orders WHERE note = 'a\nb'";
    const text = proposalText(
      'tkt_aaaaaaaaaaaaaaaaaaaa',
      sql,
      'agent via MCP (x)',
      'why\nDROP TABLE orders;\r\n-- more',
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('-- Proposed by agent via MCP (x): why DROP TABLE orders; -- more');
    expect(lines[1]).toMatch(/^-- Ticket tkt_a+\. Nothing runs/);
    const start = sqlOffset(text, sql);
    expect(start).toBeDefined();
    expect(text.slice(start, (start ?? 0) + sql.length)).toBe(sql);
    expect(sqlOffset(text, 'DELETE FROM customers')).toBeUndefined();
  });
});
