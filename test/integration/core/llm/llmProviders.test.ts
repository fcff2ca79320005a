// Both model providers against the scripted model server: the real clients (@google/genai, fetch)
// speak the real wire formats; only the model's answers are scripted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../../../src/core/platform/logger';
import { createGeminiProvider } from '../../../../src/core/llm/gemini';
import { LlmError } from '../../../../src/core/llm/llmError';
import type { LlmErrorKind } from '../../../../src/core/llm/llmError';
import { createOpenAiCompatibleProvider } from '../../../../src/core/llm/openaiCompatible';
import type { ChatMessage, LlmProvider, ToolSpec } from '../../../../src/core/llm/provider';
import { completeStructured } from '../../../../src/core/llm/structured';
import { SCRIPTED_USAGE, startScriptedModelServer } from '../../../support/scriptedModelServer';
import type { RecordedRequest, ScriptedModelServer } from '../../../support/scriptedModelServer';

type Kind = 'gemini' | 'openai';

const MODEL = { gemini: 'gemini-2.5-flash', openai: 'qwen2.5-coder:7b' } as const;
const PRICE = { input: 0.3, output: 2.5 };
const EXPECTED_COST =
  (SCRIPTED_USAGE.inputTokens * PRICE.input + SCRIPTED_USAGE.outputTokens * PRICE.output) / 1_000_000;

let server: ScriptedModelServer;

beforeEach(async () => {
  server = await startScriptedModelServer();
});

afterEach(async () => {
  await server.close();
});

function makeProvider(kind: Kind, overrides: { apiKey?: string; maxRetries?: number } = {}): LlmProvider {
  const common = {
    model: MODEL[kind],
    prices: { [MODEL[kind]]: PRICE },
    logger: silentLogger,
    maxRetries: overrides.maxRetries ?? 3,
    retryBaseDelayMs: 5,
  };
  return kind === 'gemini'
    ? createGeminiProvider({
        ...common,
        apiKey: 'apiKey' in overrides ? overrides.apiKey : 'test-gemini-key',
        baseUrl: server.url,
      })
    : createOpenAiCompatibleProvider({ ...common, apiKey: 'test-openai-key', baseUrl: `${server.url}/v1` });
}

async function expectLlmError(promise: Promise<unknown>, kind: LlmErrorKind): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmError);
  const llmError = error as LlmError;
  expect(llmError.kind, llmError.message).toBe(kind);
  expect(llmError.code).toBe('INTERNAL');
  return llmError;
}

function lastRequest(): RecordedRequest {
  const request = server.requests.at(-1);
  if (!request) throw new Error('no request was recorded');
  return request;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const user = (content: string): ChatMessage[] => [
  { role: 'system', content: 'You are a careful PostgreSQL assistant.' },
  { role: 'user', content },
];

const describeTableTool: ToolSpec = {
  name: 'describe_table',
  description: 'Columns of a table',
  parameters: { type: 'object', properties: { table: { type: 'string' } }, required: ['table'] },
};

const planSchema = z.object({ sql: z.string(), risk: z.enum(['LOW', 'HIGH']) });

describe.each<Kind>(['gemini', 'openai'])('%s provider', (kind) => {
  it('completes text with usage and estimated cost, showing the model the system and user text', async () => {
    server.script([{ reply: { text: 'There are 3 tables.' } }]);
    const response = await makeProvider(kind).complete({ messages: user('How many tables?') });

    expect(response.text).toBe('There are 3 tables.');
    expect(response.toolCalls).toEqual([]);
    expect(response.usage).toEqual(SCRIPTED_USAGE);
    expect(response.costUsd).toBeCloseTo(EXPECTED_COST, 12);
    expect(response.model).toBe(MODEL[kind]);
    expect(server.requests).toHaveLength(1);
    const request = lastRequest();
    expect(request.provider).toBe(kind);
    expect(request.model).toBe(MODEL[kind]);
    expect(request.text).toContain('You are a careful PostgreSQL assistant.');
    expect(request.text).toContain('How many tables?');
    if (kind === 'gemini') expect(request.headers['x-goog-api-key']).toBe('test-gemini-key');
    else expect(request.headers.authorization).toBe('Bearer test-openai-key');
  });

  it('returns JSON validated with zod and sends the JSON schema to the provider', async () => {
    server.script([{ reply: { json: { sql: 'SELECT 1', risk: 'LOW' } } }]);
    const result = await completeStructured(makeProvider(kind), { messages: user('plan it') }, planSchema);

    expect(result.value).toEqual({ sql: 'SELECT 1', risk: 'LOW' });
    expect(result.responses).toHaveLength(1);
    const body = lastRequest().body as Record<string, Record<string, unknown>>;
    if (kind === 'gemini') {
      expect(body.generationConfig?.responseMimeType).toBe('application/json');
      expect(body.generationConfig?.responseJsonSchema).toMatchObject({ type: 'object', required: ['sql', 'risk'] });
    } else {
      expect(body.response_format).toMatchObject({
        type: 'json_schema',
        json_schema: { strict: false, schema: { type: 'object', required: ['sql', 'risk'] } },
      });
    }
  });

  it('repairs invalid JSON once, showing the model its output and the validation error', async () => {
    server.script([
      { reply: { json: { sql: 'DELETE FROM t', risk: 'SOMEWHAT' } } },
      { reply: { json: { sql: 'DELETE FROM t', risk: 'HIGH' } } },
    ]);
    const result = await completeStructured(makeProvider(kind), { messages: user('plan it') }, planSchema);

    expect(result.value).toEqual({ sql: 'DELETE FROM t', risk: 'HIGH' });
    expect(result.responses).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
    const repair = server.requests[1]?.text ?? '';
    expect(repair).toContain('"risk":"SOMEWHAT"');
    expect(repair).toContain('risk');
    expect(repair).toMatch(/Invalid option/i);
    expect(repair).toContain('only a JSON value');
  });

  it('fails with invalid_output when the repaired reply is still not valid', async () => {
    server.script([{ reply: { text: 'Sure! Here is the plan: SELECT 1' }, times: 2 }]);
    const error = await expectLlmError(
      completeStructured(makeProvider(kind), { messages: user('plan it') }, planSchema),
      'invalid_output',
    );

    expect(error.message).toContain('not JSON');
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it('returns a function call as a ToolCall and declares the tools', async () => {
    server.script([{ reply: { functionCall: { name: 'describe_table', args: { table: 'orders' } } } }]);
    const response = await makeProvider(kind).complete({
      messages: user('What is in orders?'),
      tools: [describeTableTool],
    });

    expect(response.toolCalls).toHaveLength(1);
    expect(response.toolCalls[0]).toMatchObject({ name: 'describe_table', args: { table: 'orders' } });
    expect(response.toolCalls[0]?.id).toBeTruthy();
    const body = lastRequest().body as Record<string, unknown>;
    if (kind === 'gemini') {
      expect(body.tools).toEqual([
        {
          functionDeclarations: [
            {
              name: 'describe_table',
              description: 'Columns of a table',
              parametersJsonSchema: describeTableTool.parameters,
            },
          ],
        },
      ]);
    } else {
      expect(body.tools).toEqual([{ type: 'function', function: describeTableTool }]);
    }
  });

  it('sends a tool result back as a functionResponse / tool message', async () => {
    server.script([
      { reply: { functionCall: { name: 'describe_table', args: { table: 'orders' } } } },
      { reply: { text: 'orders has id and total.' } },
    ]);
    const provider = makeProvider(kind);
    const messages = user('What is in orders?');
    const first = await provider.complete({ messages, tools: [describeTableTool] });
    const call = first.toolCalls[0];
    if (!call) throw new Error('expected a tool call');
    const second = await provider.complete({
      messages: [
        ...messages,
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify({ columns: ['id', 'total'] }) },
      ],
      tools: [describeTableTool],
    });

    expect(second.text).toBe('orders has id and total.');
    const body = lastRequest().body as Record<string, unknown>;
    if (kind === 'gemini') {
      const contents = body.contents as { role: string; parts: Record<string, unknown>[] }[];
      expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
      expect(contents[1]?.parts[0]?.functionCall).toMatchObject({ name: 'describe_table', args: { table: 'orders' } });
      expect(contents[2]?.parts[0]?.functionResponse).toMatchObject({
        name: 'describe_table',
        response: { columns: ['id', 'total'] },
      });
    } else {
      const wire = body.messages as Record<string, unknown>[];
      expect(wire[2]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: call.id, type: 'function', function: { name: 'describe_table' } }],
      });
      expect(wire[3]).toEqual({
        role: 'tool',
        tool_call_id: call.id,
        name: 'describe_table',
        content: '{"columns":["id","total"]}',
      });
    }
  });

  it('streams text deltas in order; the final text is their concatenation', async () => {
    const text = 'The orders table has 1200 rows and 4 columns.';
    server.script([{ reply: { text } }]);
    const deltas: string[] = [];
    const response = await makeProvider(kind).stream({ messages: user('Describe orders') }, (delta) =>
      deltas.push(delta),
    );

    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(response.text).toBe(text);
    expect(response.usage).toEqual(SCRIPTED_USAGE);
    expect(lastRequest().path).toContain(kind === 'gemini' ? ':streamGenerateContent?alt=sse' : '/v1/chat/completions');
    expect((lastRequest().body as Record<string, unknown>).stream).toBe(kind === 'openai' ? true : undefined);
  });

  it('retries a 429 after its Retry-After and succeeds', async () => {
    server.script([
      { reply: { error: { status: 429, message: 'Too many requests, slow down.', retryAfterSeconds: 1 } } },
      { reply: { text: 'ok' } },
    ]);
    const response = await makeProvider(kind).complete({ messages: user('hi') });

    expect(response.text).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it('retries 503 twice and succeeds on the third request', async () => {
    server.script([
      { reply: { error: { status: 503, message: 'The model is overloaded.' } }, times: 2 },
      { reply: { text: 'ok' } },
    ]);
    const response = await makeProvider(kind).complete({ messages: user('hi') });

    expect(response.text).toBe('ok');
    expect(server.requests).toHaveLength(3);
  });

  it('reports quota exhaustion with advice once retries run out', async () => {
    server.script([
      {
        reply: {
          error: {
            status: 429,
            message: 'You exceeded your current quota, please check your plan and billing details.',
            geminiStatus: 'RESOURCE_EXHAUSTED',
          },
        },
        times: 3,
      },
    ]);
    const error = await expectLlmError(
      makeProvider(kind, { maxRetries: 2 }).complete({ messages: user('hi') }),
      'quota',
    );

    expect(server.requests).toHaveLength(3);
    expect(error.message).toContain(kind === 'gemini' ? 'Gemini' : 'OpenAI-compatible');
    expect(error.message).toContain('quota');
    expect(error.advice).toMatch(/quota to reset/);
  });

  it('reports an invalid key without retrying', async () => {
    server.script([
      {
        reply: {
          error:
            kind === 'gemini'
              ? {
                  status: 400,
                  message: 'API key not valid. Please pass a valid API key.',
                  geminiStatus: 'INVALID_ARGUMENT',
                }
              : { status: 401, message: 'Incorrect API key provided.' },
        },
        times: 5,
      },
    ]);
    const error = await expectLlmError(makeProvider(kind).complete({ messages: user('hi') }), 'invalid_key');

    expect(error.retryable).toBe(false);
    expect(error.advice).toBeTruthy();
    expect(server.requests).toHaveLength(1);
  });

  it('reports a safety block', async () => {
    server.script([{ reply: { safetyBlock: true }, times: 5 }]);
    const error = await expectLlmError(
      makeProvider(kind).complete({ messages: user('something unsafe') }),
      'safety_block',
    );

    expect(error.message).toContain('safety');
    expect(server.requests).toHaveLength(1);
  });

  it('times out a reply slower than timeoutMs', async () => {
    server.script([{ reply: { delayMs: 10_000, then: { text: 'too late' } } }]);
    const error = await expectLlmError(
      makeProvider(kind).complete({ messages: user('hi'), timeoutMs: 100 }),
      'timeout',
    );

    expect(error.message).toContain('100 ms');
    expect(server.requests).toHaveLength(1);
  });

  it('cancels on an aborted signal mid-request, without retrying', async () => {
    server.script([{ reply: { delayMs: 10_000, then: { text: 'too late' } }, times: 5 }]);
    const controller = new AbortController();
    const pending = makeProvider(kind).complete({ messages: user('hi'), signal: controller.signal });
    await until(() => server.requests.length === 1);
    controller.abort();
    await expectLlmError(pending, 'cancelled');

    expect(server.requests).toHaveLength(1);
  });

  it('cancels a call whose signal is already aborted without sending it', async () => {
    const controller = new AbortController();
    controller.abort();
    await expectLlmError(makeProvider(kind).complete({ messages: user('hi'), signal: controller.signal }), 'cancelled');
    expect(server.requests).toHaveLength(0);
  });

  it('fails loudly on an unscripted request (a server error after retries)', async () => {
    const error = await expectLlmError(
      makeProvider(kind, { maxRetries: 0 }).complete({ messages: user('unexpected') }),
      'server',
    );
    expect(error.message).toContain('unscripted');
  });
});

describe('gemini provider without a key', () => {
  it('fails with missing_key and advice, sending no request', async () => {
    const provider = makeProvider('gemini', { apiKey: undefined });
    const error = await expectLlmError(provider.complete({ messages: user('hi') }), 'missing_key');

    expect(error.advice).toContain('Set Gemini API Key');
    expect(error.advice).toContain('GEMINI_API_KEY');
    expect(server.requests).toHaveLength(0);
  });
});

describe('openai-compatible provider with a local model', () => {
  it('has no cost when the model has no price', async () => {
    server.script([{ reply: { text: 'ok' } }]);
    const provider = createOpenAiCompatibleProvider({
      baseUrl: `${server.url}/v1`,
      model: 'llama3.2',
      logger: silentLogger,
    });
    const response = await provider.complete({ messages: user('hi') });

    expect(response.costUsd).toBeNull();
    expect(lastRequest().headers.authorization).toBeUndefined();
  });
});
