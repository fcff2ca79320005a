/**
 * One tool of the server as data: name, descriptions, hints, input and output schemas (zod, turned into
 * JSON Schema by the SDK) and the adapter over the core that runs it. The same specs back the MCP server
 * and the VS Code language-model tools.
 */
import { z } from 'zod';
import { visibleText } from '../shared/visibleSql';
import type { McpToolContext } from './toolContext';

/**
 * What a tool returns: `structured` is the JSON of the matching CLI --json output (exact data); `text` is for the
 * model and for the person reading the agent's transcript, often in a terminal: every hidden character in it is
 * shown as a stand-in (defineTool does it for every tool).
 */
export interface ToolResult {
  structured: Record<string, unknown>;
  text: string;
}

export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** The database is a closed world: no tool reaches anything else. */
  openWorldHint: false;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  annotations: ToolHints;
  /** Strict: an argument the tool does not name is refused (no flag can turn a proposal into an approval). */
  input: z.ZodObject;
  output: z.ZodObject;
  run(context: McpToolContext, args: unknown): Promise<ToolResult>;
}

export const READ_HINTS: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

export function defineTool<Shape extends z.ZodRawShape>(spec: {
  name: string;
  title: string;
  description: string;
  annotations: ToolHints;
  input: Shape;
  output: z.ZodRawShape;
  run(context: McpToolContext, args: z.infer<z.ZodObject<Shape>>): Promise<ToolResult>;
}): McpTool {
  const input = z.strictObject(spec.input);
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    annotations: spec.annotations,
    input,
    output: z.looseObject(spec.output),
    run: async (context, args) => {
      const result = await spec.run(context, input.parse(args ?? {}));
      return { structured: result.structured, text: visibleText(result.text) };
    },
  };
}
