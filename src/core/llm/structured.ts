/** Structured output: JSON validated with zod, with one repair round when the model gets it wrong. */
import { z } from 'zod';
import { llmErrors } from './llmError';
import type { LlmProvider, LlmRequest, LlmResponse } from './provider';

export interface StructuredResult<T> {
  value: T;
  /** Every model call made (one, or two after a repair), for the audit trail. */
  responses: LlmResponse[];
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** The JSON schema sent to providers (the `$schema` tag is dropped: some providers reject it). */
export function toProviderJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

export async function completeStructured<T>(
  provider: LlmProvider,
  req: LlmRequest,
  schema: z.ZodType<T>,
): Promise<StructuredResult<T>> {
  const jsonSchema = toProviderJsonSchema(schema);
  const first = await provider.complete({ ...req, jsonSchema });
  const firstParsed = parseOutput(first.text, schema);
  if (firstParsed.ok) return { value: firstParsed.value, responses: [first] };

  const repairRequest: LlmRequest = {
    ...req,
    jsonSchema,
    messages: [
      ...req.messages,
      { role: 'assistant', content: first.text },
      {
        role: 'user',
        content:
          `Your previous reply was not valid: ${firstParsed.error}\n` +
          'Reply again with only a JSON value that matches the requested JSON schema: no prose, no code fences.',
      },
    ],
  };
  const second = await provider.complete(repairRequest);
  const secondParsed = parseOutput(second.text, schema);
  if (secondParsed.ok) return { value: secondParsed.value, responses: [first, second] };
  throw llmErrors.invalidOutput(provider.name, `${secondParsed.error} (after one repair attempt)`);
}

function parseOutput<T>(text: string, schema: z.ZodType<T>): Parsed<T> {
  let json: unknown;
  try {
    json = JSON.parse(stripCodeFence(text));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `the reply is not JSON (${reason}).` };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: `the JSON does not match the schema:\n${z.prettifyError(result.error)}` };
}

/** Small local models often wrap JSON in ``` fences even in JSON mode. */
function stripCodeFence(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  return fenced?.[1] ?? trimmed;
}
